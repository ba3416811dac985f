package test

import (
	"slices"
	"testing"

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
			if err != nil {
				t.Fatalf("%s/nucleus %s: %v", stage, lid, err)
			}
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
				if err != nil {
					t.Fatalf("%s/nucleus %s: %v", stage, lid, err)
				}
				if (d == iameval.Allow) != want {
					t.Errorf("%s/nucleus %s: sts:AssumeRole on %s: %v, want allowed %v", stage, lid, arn, d, want)
				}
			}
		}
		if roles != 2 {
			t.Errorf("%s/nucleus: %d roles may assume roles, want 2 (executor, API)", stage, roles)
		}
	}
}
