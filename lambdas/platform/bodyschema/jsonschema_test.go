package bodyschema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/bodyschema"
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
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCheckNamesThePath(t *testing.T) {
	s, err := bodyschema.Compile([]byte(order))
	if err != nil {
		t.Fatal(err)
	}
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
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != 400 || len(ae.Fields) != len(tc.want) {
			t.Errorf("%s: got %v, want %d field error(s)", tc.body, err, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if got := ae.Fields[i].Field + ": " + ae.Fields[i].Message; !strings.Contains(got, w) {
				t.Errorf("%s: field error %q, want %q", tc.body, got, w)
			}
		}
	}
}

func TestCheckBoundsTheErrors(t *testing.T) {
	s, err := bodyschema.Compile([]byte(`{"type":"array","items":{"type":"string"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var v api.Validator
	s.Check(&v, "body", decode(t, `[1,2,3,4,5,6,7,8,9,10,11,12]`))
	var ae *api.Error
	if !errors.As(v.Err(), &ae) || len(ae.Fields) != api.MaxFieldErrors || !strings.HasSuffix(ae.Message, "and 2 more invalid fields") {
		t.Fatalf("got %v, want %d field errors and the 2 more counted", v.Err(), api.MaxFieldErrors)
	}
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
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a CompileError with %q", tc.schema, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "urn:dynastack") {
			t.Errorf("%s: %v names the internal location", tc.schema, err)
		}
	}
	for _, ok := range []string{`{}`, `true`, `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, `{"$ref":"#/$defs/a","$defs":{"a":{"type":"string"}}}`} {
		if _, err := bodyschema.Compile([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestCacheCompilesOnce(t *testing.T) {
	c := bodyschema.Cache{Max: 2}
	a, err := c.Get(`{"type":"string"}`)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.Get(`{"type":"string"}`); a != b {
		t.Error("second Get compiled again")
	}
	if _, err := c.Get(`{"type":"strin"}`); err == nil {
		t.Error("invalid schema compiled")
	}
}
