package ddb_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidNumber(t *testing.T) {
	tests := map[string]bool{
		"0": true, "-0": true, "-0.0": true, "0.000": true, "0e999": true,
		"1": true, "-42": true, "1.5": true, "0.33": true, "1e10": true, "1E+10": true,
		"12345678901234567890":                        true,
		"12345678901234567890123456789012345678":      true,  // 38 digits
		"123456789012345678901234567890123456789":     false, // 39
		"1234567890123456789012345678901234567800":    true,  // trailing zeros are not significant
		"1234567890123456789012345678901234567800000": true,
		"0.00000000000000000000000000000000000001":    true,
		"1e125": true, "9.9e125": true, "1e126": false, "1e200": false,
		"1e-130": true, "1e-131": false, "0.00001e-125": true, "0.00001e-126": false,
		"1e99999999999999999999": false, "1e9223372036854775807": false, "10e9223372036854775807": false,
		"1" + strings.Repeat("0", 125): true, "1" + strings.Repeat("0", 126): false,
		"0." + strings.Repeat("0", 129) + "1": true, "0." + strings.Repeat("0", 130) + "1": false,
	}
	for in, want := range tests {
		assert.Equal(t, want, ddb.ValidNumber(in), "ValidNumber(%s)", in)
	}
}

func TestFromAttributeValue(t *testing.T) {
	av := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"big":  &types.AttributeValueMemberN{Value: "123456789012345678901234567890"},
		"list": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}, &types.AttributeValueMemberBOOL{Value: true}, &types.AttributeValueMemberNULL{Value: true}}},
		"ss":   &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"ns":   &types.AttributeValueMemberNS{Value: []string{"1", "2.50"}},
		"b":    &types.AttributeValueMemberB{Value: []byte("hi")},
		"m":    &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
	}}
	v, err := ddb.FromAttributeValue(av)
	require.NoError(t, err)
	b, _ := json.Marshal(v)
	// Bytes, not JSONEq: the numbers keep their digits (2.50, 30 of them).
	const want = `{"b":"aGk=","big":123456789012345678901234567890,"list":["x",true,null],"m":{},"ns":[1,2.50],"ss":["a","b"]}`
	assert.Equal(t, want, string(b))
	_, err = ddb.FromAttributeValue(&types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberBS{}}})
	assert.Error(t, err, "BS accepted")
}

func ExampleValidNumber() {
	for _, n := range []string{"12345678901234567890", "1e126", "0.1e-129"} {
		fmt.Println(n, ddb.ValidNumber(n))
	}
	// Output:
	// 12345678901234567890 true
	// 1e126 false
	// 0.1e-129 true
}
