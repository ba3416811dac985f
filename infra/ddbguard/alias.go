package ddbguard

import (
	"fmt"
	"maps"
	"slices"
)

// AliasIntroduced opens the safe change reported for a function's first
// live alias (the deploy that introduces aliases, docs/deploying.md "A
// rollback"): a new version and alias, the API integrations and their
// invoke permissions, the event source mappings and the schedules moved
// from the function to the alias. No table is touched: the mappings are
// updated in place (a stream mapping keeps its position), permissions and
// the async invoke configuration are replaced, new before old. Reviewed,
// not a hazard: nothing to acknowledge.
const AliasIntroduced = "function-alias-introduced"

const lambdaAlias = "AWS::Lambda::Alias"

// compareAliases reports each alias of n whose function had none in o.
func (c *comparer) compareAliases(key stackKey, o, n *Template) {
	had := map[string]bool{}
	for _, r := range o.Resources {
		if r.Type == lambdaAlias {
			had[refID(r.Properties["FunctionName"])] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(n.Resources)) {
		r := n.Resources[id]
		if r.Type != lambdaAlias {
			continue
		}
		if old, ok := o.Resources[id]; ok && old.Type == lambdaAlias {
			continue
		}
		fn := refID(r.Properties["FunctionName"])
		if had[fn] {
			continue
		}
		c.change(Change{Stage: key.stage, Stack: key.stack, LogicalID: id,
			Detail: fmt.Sprintf("%s: function %s published behind alias %v, which its invokers now call (no table touched)", AliasIntroduced, fn, r.Properties["Name"])})
	}
}

// refID is the logical id of {"Ref": id}, "" for anything else.
func refID(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["Ref"].(string)
	return s
}
