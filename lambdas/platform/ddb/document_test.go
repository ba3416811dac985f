package ddb_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDocRoundTrip(t *testing.T) {
	in := ddb.Doc(`{"a":[1,2.50,"x",true,null,{"b":{}}],"big":123456789012345678901234567890}`)
	av, err := attributevalue.Marshal(in)
	require.NoError(t, err)
	var out ddb.Doc
	require.NoError(t, attributevalue.Unmarshal(av, &out))
	// DynamoDB would normalize 2.50 to 2.5; the conversion itself keeps text.
	assert.Equal(t, `{"a":[1,2.50,"x",true,null,{"b":{}}],"big":123456789012345678901234567890}`, string(out), "round trip")
}

func TestDocKind(t *testing.T) {
	tests := map[string]string{
		``: "null", ` null `: "null", `{}`: "object", ` [1]`: "array", `"s"`: "string",
		`true`: "boolean", `false`: "boolean", `-1.5`: "number",
	}
	for in, want := range tests {
		d := ddb.Doc(in)
		assert.Equal(t, want, d.Kind(), "Kind(%q)", in)
		assert.Equal(t, want == "null", d.IsNull(), "IsNull(%q)", in)
	}
}

func TestDocAttributeValue(t *testing.T) {
	tests := []struct {
		doc, wantErr string
	}{
		{`{"a":[1,{"b":null}]}`, ""},
		{`null`, ""},
		{`{"":1}`, "must not contain empty object keys"},
		{`{"a":1}{}`, "must be a single JSON value"},
		{`{"a":}`, "is not valid JSON"},
		{strings.Repeat("[", 32) + strings.Repeat("]", 32), ""},
		{strings.Repeat("[", 33) + strings.Repeat("]", 33), "must not nest deeper than 32 levels"},
		{`[1e126]`, "number 1e126 is outside DynamoDB's range (38 significant digits, magnitude 1e-130 to 1e126)"},
		{`[` + strings.Repeat("9", 50) + `]`, "number " + strings.Repeat("9", 40) + "… is outside DynamoDB's range"},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			_, err := ddb.Doc(tt.doc).AttributeValue()
			if tt.wantErr == "" {
				assert.NoError(t, err, "AttributeValue()")
				return
			}
			var ie *ddb.InvalidDocError
			if assert.ErrorAs(t, err, &ie, "AttributeValue()") {
				assert.True(t, strings.HasPrefix(err.Error(), tt.wantErr), "AttributeValue() = %v, want the prefix %q", err, tt.wantErr)
			}
		})
	}
}

func TestDocArrayOfObjects(t *testing.T) {
	tests := []struct {
		doc  string
		n    int
		want bool
	}{
		{`[]`, 0, true},
		{`[{},{"a":1}]`, 2, true},
		{`[{},1]`, 2, false},
		{`{}`, 0, false},
	}
	for _, tt := range tests {
		n, ok := ddb.Doc(tt.doc).ArrayOfObjects()
		assert.Equal(t, tt.n, n, "ArrayOfObjects(%s): length", tt.doc)
		assert.Equal(t, tt.want, ok, "ArrayOfObjects(%s): an array of objects", tt.doc)
	}
}

// A Doc keeps every digit on its way into DynamoDB and back, which
// map[string]any through attributevalue would round.
func ExampleDoc() {
	d := ddb.Doc(`{"id":12345678901234567890123,"tags":["a"]}`)
	size, _ := d.Size()
	av, _ := attributevalue.Marshal(d)
	var back ddb.Doc
	_ = attributevalue.Unmarshal(av, &back)
	fmt.Println(d.Kind(), size, string(back))
	// Output:
	// object 29 {"id":12345678901234567890123,"tags":["a"]}
}
