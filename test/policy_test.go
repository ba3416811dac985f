package test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPolicyClean: cdk-nag (AwsSolutions, Serverless) and dynastack's own
// table checks report no unsuppressed error anywhere in the app.
func TestPolicyClean(t *testing.T) {
	assert.Empty(t, asm.Errors, "unsuppressed cdk-nag or table-check errors")
}

// TestSuppressionsHaveReasons: every cdk-nag suppression in the templates
// carries a specific reason.
func TestSuppressionsHaveReasons(t *testing.T) {
	n := 0
	for stage, stacks := range asm.Templates {
		for id, tmpl := range stacks {
			res, _ := tmpl["Resources"].(map[string]any)
			for lid, r := range res {
				meta, _ := r.(map[string]any)["Metadata"].(map[string]any)
				nag, _ := meta["cdk_nag"].(map[string]any)
				for _, s := range list(nag["rules_to_suppress"]) {
					n++
					reason, _ := s["reason"].(string)
					assert.GreaterOrEqual(t, len(reason), 40, "%s/%s %s: suppression %v has no specific reason", stage, id, lid, s["id"])
				}
			}
		}
	}
	assert.NotZero(t, n, "no suppressions found: the test reads the wrong metadata key")

}
