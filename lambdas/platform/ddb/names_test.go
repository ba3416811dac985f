package ddb_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type namedItem struct {
	PK     string
	SK     string
	GSI1PK string `dynamodbav:",omitempty"`
	Status string `dynamodbav:"status"`
}

func TestMarshalItem(t *testing.T) {
	for _, tt := range []struct {
		name  string
		item  namedItem
		names []string
		want  []string // the item's attribute names, sorted
	}{
		{"lower-case names", namedItem{PK: "p", SK: "s", GSI1PK: "g", Status: "x"}, []string{"pk", "sk", "gsi1pk"}, []string{"gsi1pk", "pk", "sk", "status"}},
		{"omitted stays omitted", namedItem{PK: "p", SK: "s"}, []string{"pk", "sk", "gsi1pk"}, []string{"pk", "sk", "status"}},
		{"names spelt as the fields", namedItem{PK: "p", SK: "s"}, []string{"PK", "SK"}, []string{"PK", "SK", "status"}},
		{"no names", namedItem{PK: "p", SK: "s"}, nil, []string{"PK", "SK", "status"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			item, err := ddb.MarshalItem(tt.item, tt.names...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, slices.Sorted(maps.Keys(item)), "attributes")
			// Read back as written: attributevalue folds the case.
			var back namedItem
			if assert.NoError(t, attributevalue.UnmarshalMap(item, &back), "read back") {
				assert.Equal(t, tt.item, back, "read back")
			}
		})
	}
}
