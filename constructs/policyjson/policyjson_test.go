package policyjson_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dynastack/dynastack/constructs/policyjson"
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
		if got := policyjson.Strings(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Strings(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func ExampleStrings() {
	fmt.Println(policyjson.Strings([]any{"dynamodb:GetItem", "dynamodb:Query"}))
	// Output: [dynamodb:GetItem dynamodb:Query]
}
