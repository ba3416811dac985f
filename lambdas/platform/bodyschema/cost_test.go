package bodyschema_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/bodyschema"
)

// exponential is the schema of issue 29's attack: levels $defs, each
// allOf two $refs to the next, 2^levels evaluations of every value.
func exponential(levels int) string {
	return exponentialUnder(levels, map[string]any{"$ref": "#/$defs/d0"})
}

// exponentialItems is exponential's definitions applied to each item of
// an array: every item costs 2^levels evaluations.
func exponentialItems(levels int) string {
	return exponentialUnder(levels, map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/d0"}})
}

// exponentialUnder is root with exponential's definitions.
func exponentialUnder(levels int, root map[string]any) string {
	defs := map[string]any{}
	for i := range levels {
		next := fmt.Sprintf("#/$defs/d%d", i+1)
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"allOf": []any{map[string]any{"$ref": next}, map[string]any{"$ref": next}}}
	}
	defs[fmt.Sprintf("d%d", levels)] = map[string]any{"type": "string"}
	root["$defs"] = defs
	b, _ := json.Marshal(root)
	return string(b)
}

// exponentialAs is exponential with its $refs written by ref (the
// definition's name to a $ref) and its definitions and entry placed by
// root: the ways a $ref can name a definition that are not "#/$defs/…".
func exponentialAs(levels int, ref func(name string) string, root func(defs map[string]any, entry string) map[string]any) string {
	defs := map[string]any{}
	for i := range levels {
		next := ref(fmt.Sprintf("d%d", i+1))
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"allOf": []any{map[string]any{"$ref": next}, map[string]any{"$ref": next}}}
	}
	defs[fmt.Sprintf("d%d", levels)] = map[string]any{"type": "string"}
	b, _ := json.Marshal(root(defs, ref("d0")))
	return string(b)
}

// underDefs places exponentialAs's definitions in $defs.
func underDefs(defs map[string]any, entry string) map[string]any {
	return map[string]any{"$ref": entry, "$defs": defs}
}

func TestCostlySchemasAreRefused(t *testing.T) {
	for _, tt := range []struct {
		name, schema, want string
	}{
		{"exponential $refs, 26 levels", exponential(26), "subschemas"},
		{"exponential $refs, 12 levels", exponential(12), "subschemas"},
		{"ReDoS-sized pattern", `{"type":"string","pattern":"^[ab]{1000}$"}`, "regular-expression instructions"},
		{"long pattern", `{"type":"string","pattern":"` + strings.Repeat("a", bodyschema.MaxPatternBytes+1) + `"}`, "bytes long"},
		{"costly patternProperties name", `{"type":"object","patternProperties":{"^[ab]{1000}$":true}}`, "regular-expression instructions"},
		{"wide enum", `{"enum":[` + strings.TrimSuffix(strings.Repeat(`"v",`, bodyschema.MaxEnumValues+1), ",") + `]}`, "values; at most"},
		{"deep nesting", strings.Repeat(`{"not":`, bodyschema.MaxSchemaDepth+2) + `{}` + strings.Repeat(`}`, bodyschema.MaxSchemaDepth+2), "deep"},
		// Each counted as the $refs the library follows, not as the
		// document's text reads ("#/…" pointers only).
		{"exponential $refs under a property named enum", exponentialAs(26, func(n string) string { return "#/properties/enum/$defs/" + n }, func(defs map[string]any, entry string) map[string]any {
			return map[string]any{"properties": map[string]any{"enum": map[string]any{"$ref": entry, "$defs": defs}}}
		}), "subschemas"},
		{"exponential $refs by the schema's absolute URI", exponentialAs(26, func(n string) string { return "urn:dynastack:schema#/$defs/" + n }, underDefs), "subschemas"},
		{"exponential $refs by $id", exponentialAs(26, func(n string) string { return "urn:x:" + n }, func(defs map[string]any, entry string) map[string]any {
			for name, d := range defs {
				d.(map[string]any)["$id"] = "urn:x:" + name
			}
			return underDefs(defs, entry)
		}), "subschemas"},
		{"exponential $refs by percent-encoded pointers", exponentialAs(26, func(n string) string { return "#/%24defs/" + n }, underDefs), "subschemas"},
		{"exponential $refs by $anchor in an object of subschemas", exponentialAs(26, func(n string) string { return "#" + n }, func(defs map[string]any, entry string) map[string]any {
			for name, d := range defs {
				d.(map[string]any)["$anchor"] = name
			}
			return map[string]any{"$ref": entry, "dependentSchemas": map[string]any{"x": map[string]any{"dependentSchemas": defs}}}
		}), "subschemas"},
		{"costly patternProperties name under not", `{"not":{"patternProperties":{"^[ab]{1000}$":true}}}`, "regular-expression instructions"},
		{"costly pattern under a property named title", `{"properties":{"type":{},"title":{"pattern":"^[ab]{1000}$"}}}`, "regular-expression instructions"},
		{"long pattern under a property named enum", `{"properties":{"enum":{"enum":["a"],"pattern":"` + strings.Repeat("a", bodyschema.MaxPatternBytes+1) + `"}}}`, "bytes long"},
		{"wide enum under a property named enum", `{"properties":{"enum":{"enum":[` + strings.TrimSuffix(strings.Repeat(`"v",`, bodyschema.MaxEnumValues+1), ",") + `]}}}`, "values; at most"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bodyschema.Compile([]byte(tt.schema))
			var ce *bodyschema.CompileError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, ce.Error(), tt.want)
		})
	}
}

// What a careful schema does stays accepted: a recursive $ref (validation
// is bounded by the value's own depth), shared definitions, a bounded
// pattern, a short enum.
func TestOrdinarySchemasCompile(t *testing.T) {
	for _, tt := range []struct{ name, schema string }{
		{"recursive tree", `{"$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`},
		{"anchor", `{"$defs":{"id":{"$anchor":"id","type":"string","pattern":"^[a-z0-9-]{1,64}$"}},"properties":{"a":{"$ref":"#id"},"b":{"$ref":"#id"}}}`},
		{"exponential $refs, 6 levels", exponential(6)},
		{"enum", `{"enum":["low","normal","high"]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bodyschema.Compile([]byte(tt.schema))
			require.NoError(t, err)
		})
	}
}

// costliest is the costliest schema of shape (exponential or
// exponentialItems) the limits accept, and its levels.
func costliest(t testing.TB, shape func(levels int) string) (*bodyschema.Schema, int) {
	levels := 0
	for {
		if _, err := bodyschema.Compile([]byte(shape(levels + 1))); err != nil {
			break
		}
		levels++
	}
	s, err := bodyschema.Compile([]byte(shape(levels)))
	require.NoError(t, err)
	return s, levels
}

// stringArray is a JSON array of n strings: n+1 JSON values.
func stringArray(n int) any {
	out := make([]any, n)
	for i := range out {
		out[i] = "a"
	}
	return out
}

// A value whose bound (its JSON values times the schema's Cost) is past
// MaxSteps is refused before validation, with a message that names the
// limit; a value within it is validated as before.
func TestCheckBoundsSteps(t *testing.T) {
	worst, _ := costliest(t, exponentialItems)
	require.Greater(t, worst.Cost(), bodyschema.MaxExpandedSchemas/2, "the costliest accepted schema's cost")
	simple, err := bodyschema.Compile([]byte(`{"type":"array","items":{"type":"string"}}`))
	require.NoError(t, err)
	within := bodyschema.MaxSteps/worst.Cost() - 1 // the array itself is one more value
	for _, tt := range []struct {
		name   string
		schema *bodyschema.Schema
		value  any
		want   string // "" passes
	}{
		{"one value, costliest schema", worst, stringArray(1), ""},
		{"values at the bound, costliest schema", worst, stringArray(within), ""},
		{"a wrong value at the bound, costliest schema", worst, append(stringArray(within-1).([]any), 1), "got number, want string"},
		{"values past the bound, costliest schema", worst, stringArray(within + 1), "is too costly to check"},
		{"a 16 KB body of values, costliest schema", worst, stringArray(8000), "200000-step limit"},
		{"a 16 KB body of values, simple schema", simple, stringArray(8000), ""},
		{"nested values count too", worst, map[string]any{"a": map[string]any{"b": stringArray(within)}}, "is too costly to check"},
	} {
		t.Run(tt.name, func(t *testing.T) { wantCheck(t, tt.schema, tt.value, tt.want) })
	}
}

// BenchmarkCostliestAcceptedCheck checks the largest value the step
// budget lets through against the costliest schema the limits accept:
// the most one publish's validation can cost (MaxSteps).
func BenchmarkCostliestAcceptedCheck(b *testing.B) {
	s, _ := costliest(b, exponentialItems)
	n := bodyschema.MaxSteps/s.Cost() - 1
	value := stringArray(n)
	for b.Loop() {
		var v api.Validator
		s.Check(&v, "body", value)
		if err := v.Err(); err != nil {
			require.NoError(b, err)
		}
	}
	b.ReportMetric(float64(s.Cost()), "subschemas")
	b.ReportMetric(float64(n+1), "values")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(bodyschema.MaxSteps), "ns/step")
}

// BenchmarkWorstAcceptedSchema validates a value against the costliest
// shape the limits accept (exponential $refs just under
// MaxExpandedSchemas): the publish cost a tenant's schema can reach.
func BenchmarkWorstAcceptedSchema(b *testing.B) {
	s, levels := costliest(b, exponential)
	var value any = "a string"
	for b.Loop() {
		var v api.Validator
		s.Check(&v, "body", value)
		if err := v.Err(); err != nil {
			require.NoError(b, err)
		}
	}
	b.ReportMetric(float64(levels), "levels")
}

// nested is depth arrays, one inside the other, around leaf.
func nested(depth int, leaf any) any {
	v := leaf
	for range depth {
		v = []any{v}
	}
	return v
}

// A recursive $ref is counted once in Cost (a value's depth bounds it),
// but one that leads back twice per level doubles the evaluations at each
// level of the value: 3 subschemas, and 20 nested arrays (40 bytes) would
// meet them 2^20 times. Check counts the evaluations before validating
// and refuses past MaxSteps; a tree whose $ref leads back once per level
// is checked at any depth the API lets through.
func TestCheckBoundsRecursiveRefs(t *testing.T) {
	twice, err := bodyschema.Compile([]byte(`{"$defs":{"d":{"type":["array","string"],"items":{"allOf":[{"$ref":"#/$defs/d"},{"$ref":"#/$defs/d"}]}}},"$ref":"#/$defs/d"}`))
	require.NoError(t, err, "the schema is small, and accepted")
	dynamic, err := bodyschema.Compile([]byte(`{"$dynamicAnchor":"n","type":["array","string"],"items":{"anyOf":[{"$dynamicRef":"#n"},{"$dynamicRef":"#n"}]}}`))
	require.NoError(t, err)
	tree, err := bodyschema.Compile([]byte(`{"$defs":{"d":{"type":["array","string"],"items":{"$ref":"#/$defs/d"}}},"$ref":"#/$defs/d"}`))
	require.NoError(t, err)
	for _, tt := range []struct {
		name   string
		schema *bodyschema.Schema
		value  any
		want   string // "" passes
	}{
		{"shallow", twice, nested(5, "a"), ""},
		{"shallow, wrong leaf", twice, nested(5, 1), "got number, want string or array"},
		{"20 levels", twice, nested(20, "a"), "200000-step limit"},
		{"31 levels", twice, nested(api.MaxNesting, "a"), "is too costly to check"},
		{"$dynamicRef, 31 levels", dynamic, nested(api.MaxNesting, "a"), "is too costly to check"},
		{"$dynamicRef, shallow", dynamic, nested(3, "a"), ""},
		{"once per level, 31 levels", tree, nested(api.MaxNesting, "a"), ""},
		{"once per level, wrong leaf", tree, nested(api.MaxNesting, 1), "got number, want string or array"},
	} {
		t.Run(tt.name, func(t *testing.T) { wantCheck(t, tt.schema, tt.value, tt.want) })
	}
}

// A "format": "regex" (asserted in draft-07 and older) compiles each
// string it checks: it is held to a pattern's limits, so a 16 KB string
// is refused before it is compiled (0.7 s for [\pL\pN]{1000} repeated),
// and a short one is checked as before.
func TestFormatRegexIsBounded(t *testing.T) {
	s, err := bodyschema.Compile([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":{"format":"regex"}}`))
	require.NoError(t, err)
	for _, tt := range []struct {
		name  string
		value any
		want  string // "" passes
	}{
		{"a short regex", []any{"^[a-z]+$"}, ""},
		{"not a regex", []any{"(?<=a)b"}, "body[0]: "},
		{"a long regex", []any{strings.Repeat(`[\pL\pN]{1000}`, 1000)}, "a pattern may be at most 256"},
		{"a costly regex", []any{`[\pL\pN]{1000}[ab]{1000}`}, "regular-expression instructions"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var v api.Validator
			s.Check(&v, "body", tt.value)
			if tt.want == "" {
				assert.NoError(t, v.Err())
				return
			}
			assert.ErrorContains(t, v.Err(), tt.want)
		})
	}
}

// allOf is a schema of n copies of sub under allOf.
func allOf(n int, sub string) string {
	return `{"allOf":[` + strings.TrimSuffix(strings.Repeat(sub+",", n), ",") + `]}`
}

// ones is a JSON array of n ones.
func ones(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]"
}

// Some keywords cost in proportion to what they read, not one step: a
// pattern in the string's length times its instructions (16 KB against
// [ab]{900}c is one value and 0.3 s), a format in the string's length, a
// numeric keyword in the number's digits, const and enum in the size of
// what they compare. Check counts that work with the evaluations and
// refuses past MaxSteps; ordinary values are checked as before.
func TestCheckBoundsKeywordWork(t *testing.T) {
	long := strings.Repeat("a", 16000)
	longNumber := json.Number("1." + strings.Repeat("0", 16000))
	draft7 := func(s string) string {
		return `{"$schema":"http://json-schema.org/draft-07/schema#",` + strings.TrimPrefix(s, "{")
	}
	for _, tt := range []struct {
		name, schema string
		value        any
		want         string // "" passes
	}{
		{"pattern, long string", `{"pattern":"[ab]{900}c"}`, long, "200000-step limit"},
		{"pattern, short string", `{"pattern":"[ab]{900}c"}`, strings.Repeat("a", 100), "does not match pattern"},
		{"patterns, a 2 KB string", allOf(20, `{"pattern":"[ab]{900}c"}`), strings.Repeat("a", 2000), "is too costly to check"},
		{"ordinary pattern, 16 KB of ids", `{"type":"array","items":{"type":"string","pattern":"^[a-z0-9-]{1,64}$"}}`, stringArray(8000), ""},
		{"patternProperties, long key", `{"patternProperties":{"[ab]{900}c":true}}`, map[string]any{strings.Repeat("a", 8000): 1}, "is too costly to check"},
		{"patternProperties, short key", `{"patternProperties":{"[ab]{900}c":false}}`, map[string]any{"a": 1}, ""},
		{"integer, a number of 16,000 digits", allOf(100, `{"type":"integer"}`), longNumber, "is too costly to check"},
		{"integer, an ordinary number", allOf(100, `{"type":"integer"}`), json.Number("12345678901234567890"), ""},
		{"formats, long string", draft7(allOf(300, `{"format":"email"}`)), long, "is too costly to check"},
		{"a format, long string", draft7(`{"format":"email"}`), long, "is not valid email"},
		{"enum of arrays, a large array", `{"enum":[` + strings.TrimSuffix(strings.Repeat(ones(1000)+",", bodyschema.MaxEnumValues), ",") + `]}`, decode(t, ones(1000)), "is too costly to check"},
		{"enum of arrays, a small array", `{"enum":[` + strings.TrimSuffix(strings.Repeat(ones(10)+",", 10), ",") + `]}`, decode(t, ones(10)), ""},
		{"uniqueItems, 8,000 items", `{"uniqueItems":true}`, stringArray(8000), "items at 0 and 1 are equal"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := bodyschema.Compile([]byte(tt.schema))
			require.NoError(t, err)
			var v api.Validator
			s.Check(&v, "body", tt.value)
			if tt.want == "" {
				assert.NoError(t, v.Err())
				return
			}
			assert.ErrorContains(t, v.Err(), tt.want)
		})
	}
}

// wantCheck checks value against s: it passes when want is "", else its
// error contains want.
func wantCheck(t *testing.T, s *bodyschema.Schema, value any, want string) {
	t.Helper()
	var v api.Validator
	s.Check(&v, "body", value)
	if want == "" {
		assert.NoError(t, v.Err())
		return
	}
	assert.ErrorContains(t, v.Err(), want)
}
