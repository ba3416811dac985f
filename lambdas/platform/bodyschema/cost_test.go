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
	defs := map[string]any{}
	for i := range levels {
		next := fmt.Sprintf("#/$defs/d%d", i+1)
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"allOf": []any{map[string]any{"$ref": next}, map[string]any{"$ref": next}}}
	}
	defs[fmt.Sprintf("d%d", levels)] = map[string]any{"type": "string"}
	b, _ := json.Marshal(map[string]any{"$defs": defs, "$ref": "#/$defs/d0"})
	return string(b)
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

// BenchmarkWorstAcceptedSchema validates a value against the costliest
// shape the limits accept (exponential $refs just under
// MaxExpandedSchemas): the publish cost a tenant's schema can reach.
func BenchmarkWorstAcceptedSchema(b *testing.B) {
	levels := 0
	for {
		if _, err := bodyschema.Compile([]byte(exponential(levels + 1))); err != nil {
			break
		}
		levels++
	}
	s, err := bodyschema.Compile([]byte(exponential(levels)))
	require.NoError(b, err)
	b.ReportMetric(float64(levels), "levels")
	var value any = "a string"
	for b.Loop() {
		var v api.Validator
		s.Check(&v, "body", value)
		if err := v.Err(); err != nil {
			require.NoError(b, err)
		}
	}
}
