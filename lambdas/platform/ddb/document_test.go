package ddb_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

func TestDocRoundTrip(t *testing.T) {
	in := ddb.Doc(`{"a":[1,2.50,"x",true,null,{"b":{}}],"big":123456789012345678901234567890}`)
	av, err := attributevalue.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out ddb.Doc
	if err := attributevalue.Unmarshal(av, &out); err != nil {
		t.Fatal(err)
	}
	// DynamoDB would normalize 2.50 to 2.5; the conversion itself keeps text.
	if string(out) != `{"a":[1,2.50,"x",true,null,{"b":{}}],"big":123456789012345678901234567890}` {
		t.Errorf("round trip %s", out)
	}
}

func TestDocKind(t *testing.T) {
	tests := map[string]string{
		``: "null", ` null `: "null", `{}`: "object", ` [1]`: "array", `"s"`: "string",
		`true`: "boolean", `false`: "boolean", `-1.5`: "number",
	}
	for in, want := range tests {
		d := ddb.Doc(in)
		if got := d.Kind(); got != want {
			t.Errorf("Kind(%q) = %s, want %s", in, got, want)
		}
		if d.IsNull() != (want == "null") {
			t.Errorf("IsNull(%q) = %v", in, d.IsNull())
		}
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
			var ie *ddb.InvalidDocError
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("AttributeValue() = %v", err)
			case tt.wantErr != "" && (!errors.As(err, &ie) || !strings.HasPrefix(err.Error(), tt.wantErr)):
				t.Errorf("AttributeValue() = %v, want an *InvalidError %q", err, tt.wantErr)
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
		if n, ok := ddb.Doc(tt.doc).ArrayOfObjects(); n != tt.n || ok != tt.want {
			t.Errorf("ArrayOfObjects(%s) = %d, %v; want %d, %v", tt.doc, n, ok, tt.n, tt.want)
		}
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
