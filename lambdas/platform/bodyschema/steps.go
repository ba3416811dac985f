package bodyschema

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	js "github.com/santhosh-tekuri/jsonschema/v6"
)

// Cost bounds what each of a value's JSON values may cost, but a
// recursive $ref is counted once: its depth is the value's. That holds
// for a $ref that leads back once per level (a tree's children), not for
// one that leads back twice: {"items": {"allOf": [{"$ref": "#"},
// {"$ref": "#"}]}} is 3 subschemas, and a body of 20 nested arrays
// ([[[…]]], 40 bytes) meets it 2^20 times. So Check also counts, before
// validating, the evaluations the validator could make of this value:
// the compiled schema walked over the value as the validator walks it
// (every branch of anyOf, oneOf and if/then/else taken, every $ref and
// every $dynamicRef target followed), stopping past MaxSteps. The walk
// costs what it counts, and it counts at most MaxSteps.

// graph is what the walk needs of the compiled schema besides the
// schema: the targets a $dynamicRef or $recursiveRef may resolve to at
// run time (the outermost schema in the dynamic scope with the anchor;
// the walk counts every candidate).
type graph struct {
	dynamic   map[string][]*js.Schema // $dynamicAnchor name → schemas
	recursive []*js.Schema            // $recursiveAnchor: true
}

// newGraph walks every schema reachable from root.
func newGraph(root *js.Schema) *graph {
	g := &graph{dynamic: map[string][]*js.Schema{}}
	seen := map[*js.Schema]bool{}
	var walk func(s *js.Schema)
	walk = func(s *js.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.DynamicAnchor != "" {
			g.dynamic[s.DynamicAnchor] = append(g.dynamic[s.DynamicAnchor], s)
		}
		if s.RecursiveAnchor {
			g.recursive = append(g.recursive, s)
		}
		eachChild(s, walk)
	}
	walk(root)
	return g
}

// eachChild calls f with every subschema s links to: its keywords'
// subschemas and its references' targets.
func eachChild(s *js.Schema, f func(*js.Schema)) {
	for _, sub := range inPlace(s) {
		f(sub)
	}
	if s.DynamicRef != nil {
		f(s.DynamicRef.Ref)
	}
	for _, sub := range s.Properties {
		f(sub)
	}
	for _, sub := range s.PatternProperties {
		f(sub)
	}
	for _, sub := range s.DependentSchemas {
		f(sub)
	}
	for _, d := range s.Dependencies {
		if sub, ok := d.(*js.Schema); ok {
			f(sub)
		}
	}
	if sub, ok := s.AdditionalProperties.(*js.Schema); ok {
		f(sub)
	}
	f(s.PropertyNames)
	f(s.UnevaluatedProperties)
	switch items := s.Items.(type) {
	case *js.Schema:
		f(items)
	case []*js.Schema:
		for _, sub := range items {
			f(sub)
		}
	}
	if sub, ok := s.AdditionalItems.(*js.Schema); ok {
		f(sub)
	}
	for _, sub := range s.PrefixItems {
		f(sub)
	}
	f(s.Items2020)
	f(s.Contains)
	f(s.UnevaluatedItems)
	f(s.ContentSchema)
}

// inPlace are the subschemas s applies to the value itself (not to its
// items or properties), references' static targets included.
func inPlace(s *js.Schema) []*js.Schema {
	out := make([]*js.Schema, 0, 8)
	out = append(out, s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else)
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	return out
}

// counter counts evaluations against a budget.
type counter struct {
	g    *graph
	left int
}

// spend takes n steps from the budget; false once it is spent.
func (c *counter) spend(n int) bool {
	c.left -= n
	return c.left >= 0
}

// evaluations reports whether validating v against s takes at most
// limit steps, counting at most limit+1 of them.
func (g *graph) evaluations(s *js.Schema, v any, limit int) bool {
	c := &counter{g: g, left: limit}
	return c.apply(s, v, nil)
}

// apply counts s applied to v. on are the schemas already applied to v
// itself on the way here: the validator stops a cycle that does not
// descend into the value (an error), and so does the count.
func (c *counter) apply(s *js.Schema, v any, on []*js.Schema) bool {
	if s == nil {
		return true
	}
	if !c.spend(1) {
		return false
	}
	if s.Bool != nil || slices.Contains(on, s) {
		return true
	}
	if !c.keywords(s, v) {
		return false
	}
	on = append(on, s)
	for _, sub := range inPlace(s) {
		if !c.apply(sub, v, on) {
			return false
		}
	}
	if d := s.DynamicRef; d != nil {
		if !c.apply(d.Ref, v, on) {
			return false
		}
		if d.Anchor != "" && d.Ref != nil && d.Ref.DynamicAnchor == d.Anchor {
			for _, t := range c.g.dynamic[d.Anchor] {
				if t != d.Ref && !c.apply(t, v, on) {
					return false
				}
			}
		}
	}
	if r := s.RecursiveRef; r != nil && r.RecursiveAnchor {
		for _, t := range c.g.recursive {
			if t != r && !c.apply(t, v, on) {
				return false
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		return c.object(s, v, on)
	case []any:
		return c.array(s, v)
	}
	return true
}

// object counts s's object keywords applied to v and its properties.
func (c *counter) object(s *js.Schema, v map[string]any, on []*js.Schema) bool {
	additional, _ := s.AdditionalProperties.(*js.Schema)
	for k, e := range v {
		if !c.apply(s.Properties[k], e, nil) || !c.apply(additional, e, nil) ||
			!c.apply(s.UnevaluatedProperties, e, nil) || !c.apply(s.PropertyNames, k, nil) {
			return false
		}
		for re, sub := range s.PatternProperties {
			if !c.spend(matchSteps(re, k)) || !c.apply(sub, e, nil) {
				return false
			}
		}
		if !c.apply(s.DependentSchemas[k], v, on) {
			return false
		}
		if sub, ok := s.Dependencies[k].(*js.Schema); ok && !c.apply(sub, v, on) {
			return false
		}
	}
	return true
}

// array counts s's array keywords applied to v's items.
func (c *counter) array(s *js.Schema, v []any) bool {
	additional, _ := s.AdditionalItems.(*js.Schema)
	for i, e := range v {
		switch items := s.Items.(type) {
		case *js.Schema:
			if !c.apply(items, e, nil) {
				return false
			}
		case []*js.Schema:
			if i < len(items) && !c.apply(items[i], e, nil) {
				return false
			}
		}
		if i < len(s.PrefixItems) && !c.apply(s.PrefixItems[i], e, nil) {
			return false
		}
		if !c.apply(additional, e, nil) || !c.apply(s.Items2020, e, nil) ||
			!c.apply(s.Contains, e, nil) || !c.apply(s.UnevaluatedItems, e, nil) {
			return false
		}
	}
	return true
}

// expanded applies Compile's limits to the compiled schema: its
// subschemas with every reference followed as the library resolves it
// (memoised, a recursive one counted once) against MaxExpandedSchemas,
// their nesting against MaxSchemaDepth and each enum against
// MaxEnumValues. checkCost applies them to the document first, reading
// "#…" references as the text writes them; a reference it cannot read
// (by $id, by the schema's absolute URI, percent-encoded) or a subschema
// it does not tell from an object of subschemas (under a property named
// enum or title) is counted here. doc names paths in errors.
func (g *graph) expanded(root *js.Schema, doc any) (int, error) {
	memo := map[*js.Schema]int{}
	active := map[*js.Schema]bool{}
	var err error
	var count func(s *js.Schema, depth int) int
	count = func(s *js.Schema, depth int) int {
		if s == nil || err != nil {
			return 0
		}
		if n, ok := memo[s]; ok {
			return n
		}
		if active[s] {
			return 1
		}
		if depth > MaxSchemaDepth {
			err = &CompileError{Path: locPath(doc, s.Location), Message: fmt.Sprintf("nests subschemas more than %d deep (with its $refs followed)", MaxSchemaDepth)}
			return 0
		}
		if s.Enum != nil && len(s.Enum.Values) > MaxEnumValues {
			err = &CompileError{Path: locPath(doc, s.Location+"/enum"), Message: fmt.Sprintf("lists %d values; at most %d", len(s.Enum.Values), MaxEnumValues)}
			return 0
		}
		active[s] = true
		n := 1
		add := func(sub *js.Schema) {
			if n <= MaxExpandedSchemas {
				n += count(sub, depth+1)
			}
		}
		eachChild(s, add)
		if d := s.DynamicRef; d != nil && d.Anchor != "" {
			for _, t := range g.dynamic[d.Anchor] {
				add(t)
			}
		}
		if r := s.RecursiveRef; r != nil && r.RecursiveAnchor {
			for _, t := range g.recursive {
				add(t)
			}
		}
		delete(active, s)
		memo[s] = n
		return n
	}
	n := count(root, 0)
	if err != nil {
		return 0, err
	}
	if n > MaxExpandedSchemas {
		return 0, &CompileError{Message: fmt.Sprintf("expands to more than %d subschemas with its $refs followed; a schema may make each value cost at most that many checks", MaxExpandedSchemas)}
	}
	return n, nil
}

// locPath is the path inside doc of a compiled schema's location, ""
// when it is not inside the schema's own document (an embedded $id).
func locPath(doc any, loc string) string {
	ptr, ok := strings.CutPrefix(loc, location+"#")
	if !ok || ptr == "" {
		return ""
	}
	var tokens []string
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if u, err := url.PathUnescape(tok); err == nil {
			tok = u
		}
		tokens = append(tokens, strings.NewReplacer("~1", "/", "~0", "~").Replace(tok))
	}
	return Path("", doc, tokens)
}

// What a keyword costs in proportion to what it reads, in steps (a step
// is a subschema's evaluation, about 0.2 µs): Cost and the count above
// take each evaluation as one step, but matching a pattern, checking a
// format and reading a number take time in their input's length, and
// comparing with const or enum, or for uniqueItems, in the value's size.
// A 16 KB string against "[ab]{900}c" is one value and 0.3 s.
const (
	// PatternBytesPerStep: matching n bytes against a pattern of k RE2
	// instructions costs n×k/PatternBytesPerStep steps (Go's regexp,
	// which has no DFA: 22–41 ns a byte and instruction).
	PatternBytesPerStep = 8
	// FormatBytesPerStep: a format's check of n bytes costs
	// n/FormatBytesPerStep steps (about 12 ns a byte).
	FormatBytesPerStep = 16
	// DigitsPerStep: a numeric keyword (type integer, minimum,
	// multipleOf, …, const and enum) reads a number of n characters at
	// n/DigitsPerStep steps (math/big: 50–80 ns a digit; "1.000…" with
	// 16,000 zeros is 1.3 ms each time).
	DigitsPerStep = 4
	// RegexCompileSteps: a "format": "regex" compiles the string it
	// checks (within the pattern limits: up to 0.7 ms).
	RegexCompileSteps = 3000
)

// keywords spends what s's keywords cost beyond one step on v.
func (c *counter) keywords(s *js.Schema, v any) bool {
	switch v := v.(type) {
	case string:
		n := 0
		if s.Pattern != nil {
			n += matchSteps(s.Pattern, v)
		}
		if s.Format != nil {
			n += len(v) / FormatBytesPerStep
			if s.Format.Name == "regex" {
				n += RegexCompileSteps
			}
		}
		return c.spend(n)
	case json.Number:
		reads := 0
		if s.Types != nil || s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil || s.MultipleOf != nil {
			reads = 2
		}
		if s.Const != nil {
			reads++
		}
		if s.Enum != nil {
			reads += len(s.Enum.Values)
		}
		return c.spend(reads * (len(v) / DigitsPerStep))
	case map[string]any, []any:
		times := 0
		if s.Const != nil {
			times++
		}
		if s.Enum != nil {
			times += len(s.Enum.Values)
		}
		if _, ok := v.([]any); ok && s.UniqueItems {
			times++
		}
		if times > 0 {
			return c.size(v, times)
		}
	}
	return true
}

// matchSteps is what matching s against re costs.
func matchSteps(re js.Regexp, s string) int {
	insts := MaxPatternInsts // a pattern not compiled by regexpEngine
	if p, ok := re.(*pattern); ok {
		insts = p.insts
	}
	return len(s) * insts / PatternBytesPerStep
}

// size spends times steps for every JSON value in v, and for every
// FormatBytesPerStep bytes of its strings and keys and DigitsPerStep
// characters of its numbers: what comparing or hashing v reads.
func (c *counter) size(v any, times int) bool {
	n := 1
	switch v := v.(type) {
	case string:
		n += len(v) / FormatBytesPerStep
	case json.Number:
		n += len(v) / DigitsPerStep
	case map[string]any:
		for k, e := range v {
			if !c.spend(times*(len(k)/FormatBytesPerStep)) || !c.size(e, times) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !c.size(e, times) {
				return false
			}
		}
	}
	return c.spend(n * times)
}
