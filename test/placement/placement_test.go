// Package placement synthesizes a stage whose services live in different
// accounts and Regions (config.Stage.Services) with every check of the
// app's synth, and reads each stack's environment from the assembly.
package placement

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
	agenticpmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/catalog"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/test/cdkapp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	accountA = "111111111111"
	accountB = "222222222222"
)

// placed is prod with itsm in us-east-1 of account A and agenticpm in
// ap-southeast-2 of account B; the other services keep the stage's
// (environment-agnostic) placement.
func placed() config.Stage {
	s, err := config.Lookup("prod")
	if err != nil {
		panic(err)
	}
	s.Services = map[string]config.Placement{
		itsmcontract.Name:      {Account: accountA, Region: config.ITSMDocumentRegion},
		agenticpmcontract.Name: {Account: accountB, Region: "ap-southeast-2"},
	}
	return s
}

var (
	asm      *cdkapp.Assembly
	synthErr error
)

// One synth for the package (jsii is not goroutine-safe and slow to start).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dynastack-placement-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	asm, synthErr = cdkapp.Synth(dir, cdkapp.Options{Stages: []config.Stage{placed()}, Checks: true})
	jsii.Close()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestServicesWhereTheyBelong: each placed stack carries its account and
// Region, the others stay environment-agnostic, and every check of the
// synth passes (cdk-nag, dynastack's table and IAM checks, the Control
// Tower controls; CloudFormation validation unless CDK_VALIDATION=false).
func TestServicesWhereTheyBelong(t *testing.T) {
	require.NoError(t, synthErr, "synth of prod with placed services")
	assert.Empty(t, asm.Errors, "every check passes")
	want := map[string]string{
		itsmcontract.Name:      "aws://" + accountA + "/us-east-1",
		agenticpmcontract.Name: "aws://" + accountB + "/ap-southeast-2",
	}
	stacks := asm.Stacks["prod"]
	require.Len(t, stacks, len(catalog.Services()), "one stack per service")
	for _, c := range catalog.Services() {
		env, ok := want[c.Name]
		if !ok {
			env = "aws://unknown-account/unknown-region"
		}
		assert.Equal(t, env, stacks[c.Name].Environment, "%s: environment", c.Name)
	}
}

// TestNothingCrossesAStack: no template imports another's export or
// exports anything, so a stack deploys alone in its account.
func TestNothingCrossesAStack(t *testing.T) {
	require.NoError(t, synthErr)
	for id, tmpl := range asm.Templates["prod"] {
		b, err := json.Marshal(tmpl)
		require.NoError(t, err)
		raw := string(b)
		assert.NotContains(t, raw, "Fn::ImportValue", "%s: imports another stack's value", id)
		outputs, _ := tmpl["Outputs"].(map[string]any)
		for name, o := range outputs {
			_, exported := o.(map[string]any)["Export"]
			assert.False(t, exported, "%s: output %s is exported", id, name)
		}
		// The stage's overview dashboard (in the catalog's first service's
		// stack) graphs the other accounts' metrics through CloudWatch
		// cross-account observability: an account id there is a metric's
		// accountId in the dashboard body, which no deployment depends on.
		if id == catalog.Services()[0].Name {
			for _, acct := range []string{accountA, accountB} {
				graphed := `\"accountId\":\"` + acct + `\"`
				assert.Contains(t, raw, graphed, "%s: the overview graphs account %s's metrics", id, acct)
				raw = strings.ReplaceAll(raw, graphed, "")
			}
		}
		assert.False(t, strings.Contains(raw, accountA) && id != itsmcontract.Name, "%s: names account A", id)
		assert.False(t, strings.Contains(raw, accountB) && id != agenticpmcontract.Name, "%s: names account B", id)
	}
}
