// Documents: what services need to store free-form JSON as a
// DynamoDB document (M, L, S, N, BOOL, NULL) without losing digits: [Doc],
// a JSON value that converts itself both ways and says why DynamoDB would
// refuse it, the range check DynamoDB applies to numbers, and the
// conversion of a stored document back to JSON values.
//
// Numbers are json.Number both ways. Going through float64, as
// attributevalue does for map[string]any, would round integers above 2^53
// (ids, for one) and is why services convert documents themselves.

package ddb

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxDocDepth is DynamoDB's nesting limit for document attributes: the number
// of levels of maps and lists, the attribute itself being level 1.
const MaxDocDepth = 32

// ValidNumber reports whether DynamoDB's N type holds the JSON number s: at
// most 38 significant digits, and zero or a magnitude from 1e-130 to below
// 1e126. A number it refuses fails the whole write with a
// ValidationException, so services check first and answer 400.
func ValidNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			return false
		}
		mant, exp = s[:i], e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	lead := len(digits) - len(strings.TrimLeft(digits, "0"))
	sig := strings.TrimRight(digits[lead:], "0")
	if sig == "" {
		return true // zero, whatever its exponent
	}
	if len(sig) > 38 {
		return false
	}
	// value = d.ddd × 10^adjusted. An exponent near the int limits wraps
	// adjusted far outside [-130, 125], never into it: the lengths added
	// are those of the input.
	adjusted := len(intPart) - lead - 1 + exp
	return adjusted >= -130 && adjusted <= 125
}

// FromAttributeValue returns the JSON value of a stored document: maps
// become map[string]any, lists []any, numbers json.Number, S string, BOOL
// bool and NULL nil. Services never write sets or binary, but an item
// edited by hand still reads as the nearest JSON: SS as strings, NS as
// numbers, B as base64 text. Only BS is an error.
func FromAttributeValue(av types.AttributeValue) (any, error) {
	switch v := av.(type) {
	case *types.AttributeValueMemberM:
		m := make(map[string]any, len(v.Value))
		for k, e := range v.Value {
			x, err := FromAttributeValue(e)
			if err != nil {
				return nil, err
			}
			m[k] = x
		}
		return m, nil
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			x, err := FromAttributeValue(e)
			if err != nil {
				return nil, err
			}
			l[i] = x
		}
		return l, nil
	case *types.AttributeValueMemberS:
		return v.Value, nil
	case *types.AttributeValueMemberN:
		return json.Number(v.Value), nil
	case *types.AttributeValueMemberBOOL:
		return v.Value, nil
	case *types.AttributeValueMemberNULL:
		return nil, nil
	case *types.AttributeValueMemberSS:
		return v.Value, nil
	case *types.AttributeValueMemberNS:
		l := make([]json.Number, len(v.Value))
		for i, n := range v.Value {
			l[i] = json.Number(n)
		}
		return l, nil
	case *types.AttributeValueMemberB:
		return base64.StdEncoding.EncodeToString(v.Value), nil
	}
	return nil, fmt.Errorf("jsondoc: unsupported attribute value %T in document", av)
}
