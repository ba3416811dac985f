package e2e

import (
	"slices"
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTemplatesFollowTheContracts: in every stage, each service's stack
// deploys exactly its contract's functions, each told its stage and
// finding its tables under the contract's variables. The code reads the same contract, so the names agree by
// construction; this proves the stacks built from it.
func TestTemplatesFollowTheContracts(t *testing.T) {
	for _, stage := range []string{"dev", "stage", "prod"} {
		for _, c := range catalog.Services() {
			t.Run(stage+"/"+c.Name, func(t *testing.T) {
				tmpl, err := cfntables.Load(testenv.Template(t, stage, c.Name))
				require.NoError(t, err)
				fns, err := tmpl.Functions()
				require.NoError(t, err)
				tables, err := tmpl.Tables()
				require.NoError(t, err)
				isTable := func(id string) bool {
					return slices.ContainsFunc(tables, func(tb cfntables.Table) bool { return tb.LogicalID == id })
				}
				var deployed []string
				for _, fn := range fns {
					deployed = append(deployed, fn.Service())
					want, ok := c.Function(fn.Service())
					if !assert.True(t, ok, "function %s (%s=%q) is not in the contract", fn.LogicalID, service.EnvFunction, fn.Service()) {
						continue
					}
					assert.Equal(t, stage, fn.Env[service.EnvStage].Literal, "function %s: %s", want.Name, service.EnvStage)
					// A variable naming a table (a Ref to it) is one of the
					// contract's table variables.
					for k, v := range fn.Env {
						if isTable(v.Ref) {
							assert.True(t, slices.ContainsFunc(c.Tables, func(tb service.Table) bool { return tb.Env == k }), "function %s: %s refers to %s and is no table variable of the contract", want.Name, k, v.Ref)
						}
					}
				}
				for _, f := range c.Functions {
					assert.Contains(t, deployed, f.Name, "contract function %s is not deployed", f.Name)
				}
			})
		}
	}
}
