package ddb

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// S, N, Bool and B are the values of an expression written out (Expr), made
// as attributevalue.Marshal makes them from a Go string, integer or bool
// (an empty string is an empty S, not NULL), without its reflection: a
// route's values are of known types.
func S[T ~string](s T) types.AttributeValue { return &types.AttributeValueMemberS{Value: string(s)} }

// N is an integer as a DynamoDB number (see S).
func N[T ~int | ~int32 | ~int64](n T) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(int64(n), 10)}
}

// Bool is a DynamoDB boolean (see S).
func Bool(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }

// B is bytes as a DynamoDB binary, or NULL for nil (see S). Unlike
// attributevalue it does not copy b: b must not change until the request
// is sent.
func B(b []byte) types.AttributeValue {
	if b == nil {
		return &types.AttributeValueMemberNULL{Value: true}
	}
	return &types.AttributeValueMemberB{Value: b}
}
