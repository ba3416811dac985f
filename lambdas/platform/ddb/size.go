package ddb

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxItemBytes is DynamoDB's item size limit (400 KB, attribute names
// included).
const MaxItemBytes = 400 * 1024

// ItemSize estimates the stored size of item in bytes following the rules in
// the DynamoDB developer guide ("Item sizes and formats"). Numbers are
// over-estimated slightly, so a result under MaxItemBytes is safe to write.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize: up to 38 significant digits stored two per byte, plus one.
func numberSize(s string) int {
	digits := strings.TrimLeft(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s), "0")
	return (len(digits)+1)/2 + 1
}
