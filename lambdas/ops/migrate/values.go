package migrate

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Timestamp puts a timestamp the original systems wrote (RFC 3339 in any
// precision and offset: Python's isoformat, Go's time.RFC3339, JavaScript's
// toISOString) in dynastack's fixed-width UTC form (ddb.SortableLayout).
// changed is false when s is in that form already; ok is false when s is
// no RFC 3339 timestamp at all (a migration reports such an item).
func Timestamp(s string) (norm string, changed, ok bool) {
	if _, err := ddb.ParseSortableTime(s); err == nil && len(s) == len(ddb.SortableLayout) {
		return s, false, true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s, false, false
	}
	return ddb.SortableTime(t), true, true
}

// String is item's string attribute name ("" when absent or no string).
func String(item Item, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// Has tells whether item has the attribute.
func Has(item Item, name string) bool {
	_, ok := item[name]
	return ok
}
