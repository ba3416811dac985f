package ddbguard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAliasIntroduced: the first deploy that puts functions behind their
// live alias is a reviewed, safe change per alias, never a hazard; an
// unchanged alias is no change at all.
func TestAliasIntroduced(t *testing.T) {
	removeAliases := func(tm tpl) int {
		n := 0
		for id, r := range resources(tm) {
			if r.(map[string]any)["Type"] == lambdaAlias {
				delete(resources(tm), id)
				n++
			}
		}
		return n
	}
	for _, stage := range []string{"dev", "prod"} {
		t.Run(stage, func(t *testing.T) {
			var aliases int
			r := compareEdited(t, stage, "rezagent", func(o, _ tpl) { aliases = removeAliases(o) })
			require.Equal(t, 3, aliases, "rez_agent's API, scheduler and processor each have a live alias")
			require.Empty(t, r.Hazards, "hazards:\n%s", lines(r.Hazards))
			var got []string
			for _, c := range r.Changes {
				if strings.HasPrefix(c.Detail, AliasIntroduced+": ") {
					got = append(got, c.Detail)
				}
			}
			assert.Len(t, got, aliases, "changes: %v", r.Changes)
			assert.Contains(t, strings.Join(got, "\n"), "published behind alias live", "changes")
			assert.Contains(t, r.Summary(), AliasIntroduced, "the summary lists it")
		})
	}
	r := compareEdited(t, "prod", "rezagent", func(_, _ tpl) {})
	assert.Empty(t, r.Changes, "aliases on both sides are no change")
}
