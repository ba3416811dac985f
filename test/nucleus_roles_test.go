package test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/policyjson"
	"github.com/dynastack/dynastack/test/iameval"
)

// TestNucleusAssumesNoRoleUnderAPath evaluates, in every stage, the
// sts:AssumeRole statements of every Nucleus role (the executor's and the
// API's connection test) with IAM's logic: a role the pattern names may be
// assumed in any account; a role under a path may not, even when the
// pattern's * would match it (role/nucleus-executor-x/OrgAdmin), and
// neither may any other role.
func TestNucleusAssumesNoRoleUnderAPath(t *testing.T) {
	for stage, stacks := range asm.Templates {
		tmpl := stacks["nucleus"]
		resources, _ := tmpl["Resources"].(map[string]any)
		roles := 0
		for lid, p := range tmpl.Resources("AWS::IAM::Policy") {
			doc, _ := props(p)["PolicyDocument"].(map[string]any)
			var assume []any
			for _, st := range list(doc["Statement"]) {
				if slices.Contains(policyjson.Strings(st["Action"]), "sts:AssumeRole") {
					assume = append(assume, st)
				}
			}
			if len(assume) == 0 {
				continue
			}
			roles++
			resolved, err := iameval.Resolve(map[string]any{"Statement": assume}, resources, deployEnv)
			require.NoError(t, err, "%s/nucleus %s", stage, lid)
			for arn, want := range map[string]bool{
				"arn:aws:iam::123456789012:role/nucleus-executor-" + stage:   true,
				"arn:aws:iam::444455556666:role/nucleus-executor-x":          true,
				"arn:aws:iam::123456789012:role/nucleus-executor-x/OrgAdmin": false,
				"arn:aws:iam::123456789012:role/ops/nucleus-executor-a":      false,
				"arn:aws:iam::123456789012:role/nucleus-executor-/x":         false,
				"arn:aws:iam::123456789012:role/OrgAdmin":                    false,
				"arn:aws:iam::123456789012:user/nucleus-executor-x":          false,
			} {
				d, err := iameval.Evaluate(resolved, iameval.Request{Action: "sts:AssumeRole", Resource: arn})
				require.NoError(t, err, "%s/nucleus %s", stage, lid)
				assert.Equal(t, want, d == iameval.Allow, "%s/nucleus %s: sts:AssumeRole on %s allowed (decision %v)", stage, lid, arn, d)
			}
		}
		assert.Equal(t, 2, roles, "%s/nucleus: roles that may assume roles (executor, API)", stage)

	}
}
