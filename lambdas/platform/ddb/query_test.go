package ddb_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pos is a position in the pager table, as a service's page key is.
type pos struct {
	PK string `json:"p" dynamodbav:"pk"`
	SK string `json:"s" dynamodbav:"sk"`
}

type row struct {
	SK   string `dynamodbav:"sk"`
	Dead bool   `dynamodbav:"dead"`
}

func TestQueryPage(t *testing.T) {
	dead := map[int]bool{3: true, 4: true}
	client, table := pagerTable(t, 8, dead)
	codec := ddb.NewCursorCodec([]byte("k"))
	query := func() ddb.Query[row, pos] {
		return ddb.Query[row, pos]{
			Input: &dynamodb.QueryInput{
				TableName:                 aws.String(table),
				KeyConditionExpression:    aws.String("pk = :p"),
				FilterExpression:          aws.String("dead = :f"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "p"}, ":f": &types.AttributeValueMemberBOOL{Value: false}},
				ConsistentRead:            aws.Bool(true),
			},
			Pager: ddb.Pager{Size: 3, Slack: 3},
			Codec: codec,
			Scope: "test/p",
			Check: func(k pos) error {
				switch {
				case k.PK != "p":
					return ddb.ErrInvalidCursor
				case k.SK > "006":
					return ddb.ErrPastEnd
				}
				return nil
			},
		}
	}
	mint := func(scope string, k pos) string {
		tok, err := ddb.EncodeCursor(codec, scope, k)
		require.NoError(t, err)
		return tok
	}
	tests := []struct {
		name    string
		token   string
		want    string // the items' sort keys
		next    bool
		wantErr error
	}{
		{"first page", "", "000 001 002 ", true, nil},
		{"filtered items are skipped and the page still fills", mint("test/p", pos{"p", "002"}), "005 006 007 ", false, nil},
		{"past the end is an empty last page", mint("test/p", pos{"p", "007"}), "", false, nil},
		{"a cursor the check refuses", mint("test/p", pos{"q", "002"}), "", false, ddb.ErrInvalidCursor},
		{"a cursor of another scope", mint("test/q", pos{"p", "002"}), "", false, ddb.ErrInvalidCursor},
		{"a tampered cursor", "x" + mint("test/p", pos{"p", "002"}), "", false, ddb.ErrInvalidCursor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := query()
			assert.ErrorIs(t, q.Valid(tt.token), tt.wantErr, "Valid")
			page, err := q.Page(context.Background(), client, tt.token)
			require.ErrorIs(t, err, tt.wantErr, "Page") // nil wants nil
			if err != nil {
				return
			}
			got := ""
			for _, r := range page.Items {
				got += r.SK + " "
			}
			assert.Equal(t, tt.want, got, "items")
			assert.Equal(t, tt.next, page.Next != "", "a next page (%q)", page.Next)
			assert.NotNil(t, page.Items, "items")
		})
	}
}

// The cursors of a chain of pages visit every live item once, raw items
// (T a map) included, and a cursor is the key of the page's last item.
func TestQueryChain(t *testing.T) {
	client, table := pagerTable(t, 7, nil)
	q := ddb.Query[map[string]types.AttributeValue, pos]{
		Input: &dynamodb.QueryInput{
			TableName:                 aws.String(table),
			KeyConditionExpression:    aws.String("pk = :p"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "p"}},
		},
		Pager: ddb.Pager{Size: 2},
		Codec: ddb.NewCursorCodec([]byte("k")),
		Scope: "test/chain",
	}
	var got, token string
	for range 10 {
		page, err := q.Page(context.Background(), client, token)
		require.NoError(t, err)
		got += sks(page.Items)
		if token = page.Next; token == "" {
			break
		}
		k, err := ddb.DecodeCursor[pos](q.Codec, q.Scope, token)
		last := page.Items[len(page.Items)-1]["sk"].(*types.AttributeValueMemberS).Value
		if assert.NoError(t, err, "cursor") {
			assert.Equal(t, last, k.SK, "cursor: the last item")
		}
	}
	assert.Equal(t, "000 001 002 003 004 005 006 ", got, "chain")
}

func TestAll(t *testing.T) {
	client, table := pagerTable(t, 5, nil)
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "p"}},
		Limit:                     aws.Int32(2),
	}
	for _, tt := range []struct {
		name    string
		stop    int // break after this many items, 0 for none
		want    string
		queries int
	}{
		{"every page", 0, "000 001 002 003 004 ", 3},
		{"a break reads no further page", 3, "000 001 002 ", 2},
		{"a break at a page's end too", 2, "000 001 ", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &countingQuery{client: client}
			var items []map[string]types.AttributeValue
			for item, err := range ddb.All(context.Background(), c, in) {
				require.NoError(t, err)
				if items = append(items, item); len(items) == tt.stop {
					break
				}
			}
			assert.Equal(t, tt.want, sks(items), "items")
			assert.Len(t, c.limits, tt.queries, "queries")
		})
	}
	assert.Nil(t, in.ExclusiveStartKey, "All changed the caller's input")
	for _, err := range ddb.All(context.Background(), client, &dynamodb.QueryInput{TableName: aws.String("missing"),
		KeyConditionExpression: in.KeyConditionExpression, ExpressionAttributeValues: in.ExpressionAttributeValues}) {
		assert.ErrorIs(t, err, ddb.ErrTableNotFound)
	}
}
