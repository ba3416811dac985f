package policyjson_test

import (
	"fmt"
	"testing"

	"github.com/dynastack/dynastack/constructs/policyjson"
	"github.com/stretchr/testify/assert"
)

func TestStrings(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want []string
	}{
		{"dynamodb:GetItem", []string{"dynamodb:GetItem"}},
		{[]any{"a", map[string]any{"Ref": "X"}, "b"}, []string{"a", "b"}},
		{map[string]any{"Fn::Join": []any{}}, nil},
		{nil, nil},
	} {
		assert.Equal(t, tt.want, policyjson.Strings(tt.in), "Strings(%v)", tt.in)
	}
}

func ExampleStrings() {
	fmt.Println(policyjson.Strings([]any{"dynamodb:GetItem", "dynamodb:Query"}))
	// Output: [dynamodb:GetItem dynamodb:Query]
}
