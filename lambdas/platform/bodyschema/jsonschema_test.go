package bodyschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/bodyschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const order = `{
  "type": "object",
  "required": ["id", "items"],
  "properties": {
    "id": {"type": "string"},
    "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
    "odd key": {"type": "integer"}
  },
  "$defs": {"item": {"type": "object", "required": ["qty"], "properties": {"qty": {"type": "integer", "minimum": 1}}}}
}`

func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

func TestCheckNamesThePath(t *testing.T) {
	s, err := bodyschema.Compile([]byte(order))
	require.NoError(t, err)
	for _, tc := range []struct {
		body string
		want []string // "field: message" substrings, in order
	}{
		{`{"id":"a","items":[{"qty":1}]}`, nil},
		{`{"id":"a","items":[{"qty":12345678901234567890123}]}`, nil},
		{`{"id":"a","items":[{"qty":1},{"qty":"2"}]}`, []string{"message.body.items[1].qty: got string, want integer"}},
		{`{"id":"a","items":[{"qty":0}]}`, []string{"message.body.items[0].qty: minimum"}},
		{`{"items":[]}`, []string{"message.body: missing property 'id'"}},
		{`{"id":"a","items":[],"odd key":1.5}`, []string{`message.body["odd key"]: got number, want integer`}},
		{`"text"`, []string{"message.body: got string, want object"}},
		{`null`, []string{"message.body: got null, want object"}},
	} {
		var v api.Validator
		s.Check(&v, "message.body", decode(t, tc.body))
		err := v.Err()
		if tc.want == nil {
			assert.NoError(t, err, tc.body)
			continue
		}
		var ae *api.Error
		if !assert.ErrorAs(t, err, &ae, tc.body) || !assert.Equal(t, 400, ae.Status, "%s: status", tc.body) ||
			!assert.Len(t, ae.Fields, len(tc.want), "%s: field errors", tc.body) {
			continue
		}
		for i, w := range tc.want {
			assert.Contains(t, ae.Fields[i].Field+": "+ae.Fields[i].Message, w, "%s: field error %d", tc.body, i)
		}
	}
}

func TestCheckBoundsTheErrors(t *testing.T) {
	s, err := bodyschema.Compile([]byte(`{"type":"array","items":{"type":"string"}}`))
	require.NoError(t, err)
	var v api.Validator
	s.Check(&v, "body", decode(t, `[1,2,3,4,5,6,7,8,9,10,11,12]`))
	var ae *api.Error
	require.ErrorAs(t, v.Err(), &ae)
	require.Len(t, ae.Fields, api.MaxFieldErrors, "field errors")
	require.True(t, strings.HasSuffix(ae.Message, "and 2 more invalid fields"), "message %q: want the 2 more counted", ae.Message)
}

func TestCompileRefuses(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"strin"}`, "is not a valid JSON Schema"},
		{`{"properties":{"a":{"minimum":"x"}}}`, "properties.a.minimum: is not a valid JSON Schema"},
		{`{"$ref":"https://example.com/other.json"}`, "may refer only to itself"},
		{`{"$ref":"file:///etc/passwd"}`, "may refer only to itself"},
		{`{"pattern":"(?<=a)b"}`, "is not a valid JSON Schema"},
		{`[1]`, "must be a JSON object"},
		{`{"maxLength":12345678901234567890}`, "maxLength: must be at most 2147483647"},
		{`{"properties":{"a":{"items":{"minItems":1e30}}}}`, "properties.a.items.minItems: must be at most"},
		{`{"allOf":[{"maxProperties":99999999999}]}`, "allOf[0].maxProperties: must be at most"},
		{`{"a":`, "is not JSON"},
	} {
		_, err := bodyschema.Compile([]byte(tc.schema))
		var ce *bodyschema.CompileError
		if assert.ErrorAs(t, err, &ce, tc.schema) {
			assert.Contains(t, err.Error(), tc.want, tc.schema)
		}
		if err != nil {
			assert.NotContains(t, err.Error(), "urn:dynastack", "%s: names the internal location", tc.schema)
		}
	}
	for _, ok := range []string{`{}`, `true`, `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, `{"$ref":"#/$defs/a","$defs":{"a":{"type":"string"}}}`} {
		_, err := bodyschema.Compile([]byte(ok))
		assert.NoError(t, err, ok)
	}
}

func TestCacheCompilesOnce(t *testing.T) {
	c := bodyschema.Cache{Max: 2}
	a, err := c.Get(`{"type":"string"}`)
	require.NoError(t, err)
	b, _ := c.Get(`{"type":"string"}`)
	assert.Same(t, a, b, "second Get compiled again")
	_, err = c.Get(`{"type":"strin"}`)
	assert.Error(t, err, "invalid schema compiled")
}
