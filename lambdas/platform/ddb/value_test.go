package ddb_test

import (
	"math"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValues: S, N, Bool and B make what attributevalue.Marshal makes of the
// same Go value, which is what the expression builder sent.
func TestValues(t *testing.T) {
	type status string
	tests := []struct {
		name string
		got  types.AttributeValue
		of   any
	}{
		{"a string", ddb.S("open"), "open"},
		{"an empty string is an empty S", ddb.S(""), ""},
		{"a named string type", ddb.S(status("queued")), status("queued")},
		{"an int", ddb.N(42), 42},
		{"a negative int", ddb.N(-1), -1},
		{"zero", ddb.N(0), 0},
		{"an int32", ddb.N(int32(7)), int32(7)},
		{"the largest int64", ddb.N(int64(math.MaxInt64)), int64(math.MaxInt64)},
		{"the smallest int64", ddb.N(int64(math.MinInt64)), int64(math.MinInt64)},
		{"true", ddb.Bool(true), true},
		{"false", ddb.Bool(false), false},
		{"bytes", ddb.B([]byte("{}")), []byte("{}")},
		{"no bytes are an empty B", ddb.B([]byte{}), []byte{}},
		{"nil bytes are NULL", ddb.B(nil), []byte(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := attributevalue.Marshal(tt.of)
			require.NoError(t, err)
			assert.Equal(t, want, tt.got, "what attributevalue.Marshal makes")
		})
	}
}
