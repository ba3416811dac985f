package ddb_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
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
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(item)); !slices.Equal(got, tt.want) {
				t.Errorf("attributes %v, want %v", got, tt.want)
			}
			// Read back as written: attributevalue folds the case.
			var back namedItem
			if err := attributevalue.UnmarshalMap(item, &back); err != nil || back != tt.item {
				t.Errorf("read back %+v, %v; want %+v", back, err, tt.item)
			}
		})
	}
}
