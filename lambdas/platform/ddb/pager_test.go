package ddb_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingQuery records the Limit of each Query round.
type countingQuery struct {
	client *dynamodb.Client
	limits []int32
}

func (c *countingQuery) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.limits = append(c.limits, *in.Limit)
	return c.client.Query(ctx, in, opts...)
}

// pagerTable holds one partition of items n = 0..total-1 in sort order;
// items whose n is in dead carry dead=true.
func pagerTable(t *testing.T, total int, dead map[int]bool) (*dynamodb.Client, string) {
	t.Helper()
	ctx := context.Background()
	client := testenv.Client(t)
	table := "pager-" + testenv.Suffix()
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	require.NoError(t, err)
	for n := range total {
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
			"pk":   &types.AttributeValueMemberS{Value: "p"},
			"sk":   &types.AttributeValueMemberS{Value: fmt.Sprintf("%03d", n)},
			"dead": &types.AttributeValueMemberBOOL{Value: dead[n]},
		}})
		require.NoError(t, err)
	}
	return client, table
}

func sks(items []map[string]types.AttributeValue) string {
	s := ""
	for _, it := range items {
		s += it["sk"].(*types.AttributeValueMemberS).Value + " "
	}
	return s
}

func TestPagerFill(t *testing.T) {
	dead := map[int]bool{}
	for n := 2; n < 9; n++ {
		dead[n] = true // a run of seven expired items after the first two
	}
	client, table := pagerTable(t, 14, dead)
	alive := func(it map[string]types.AttributeValue) bool {
		return !it["dead"].(*types.AttributeValueMemberBOOL).Value
	}
	tests := []struct {
		name       string
		pager      ddb.Pager
		start      string
		wantItems  string
		wantNext   string // sk of Next, "" for none
		wantLimits string
	}{
		{"no filter, page and one more", ddb.Pager{Size: 3}, "", "000 001 002 ", "002", "[4]"},
		{"last page has no next", ddb.Pager{Size: 3}, "011", "012 013 ", "", "[4]"},
		{"exact multiple of the page: no cursor to an empty page", ddb.Pager{Size: 2}, "011", "012 013 ", "", "[3]"},
		{"keep drops, rounds ask for what is missing", ddb.Pager{Size: 3, Keep: alive}, "", "000 001 009 ", "009", "[4 2 2 2 1]"},
		{"grow doubles", ddb.Pager{Size: 3, Keep: alive, Grow: true}, "", "000 001 009 ", "009", "[4 8]"},
		{"slack widens each round", ddb.Pager{Size: 3, Keep: alive, Slack: 8}, "", "000 001 009 ", "009", "[12]"},
		{"max limit caps a round", ddb.Pager{Size: 3, Keep: alive, Grow: true, MaxLimit: 5}, "", "000 001 009 ", "009", "[4 5 5]"},
		{"max rounds: short page, next at the last key read", ddb.Pager{Size: 3, Keep: alive, MaxRounds: 2}, "", "000 001 ", "005", "[4 2]"},
		{"budget: short page, next at the last key read", ddb.Pager{Size: 3, Keep: alive, Grow: true, Budget: 6}, "", "000 001 ", "005", "[4 2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &dynamodb.QueryInput{
				TableName:                 aws.String(table),
				KeyConditionExpression:    aws.String("pk = :p"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "p"}},
				ConsistentRead:            aws.Bool(true),
			}
			if tt.start != "" {
				in.ExclusiveStartKey = map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: "p"}, "sk": &types.AttributeValueMemberS{Value: tt.start}}
			}
			c := &countingQuery{client: client}
			page, err := tt.pager.Fill(context.Background(), c, in)
			require.NoError(t, err)
			next := ""
			if page.Next != nil {
				next = page.Next["sk"].(*types.AttributeValueMemberS).Value
			}
			assert.Equal(t, tt.wantItems, sks(page.Items), "items")
			assert.Equal(t, tt.wantNext, next, "next")
			assert.Equal(t, tt.wantLimits, fmt.Sprint(c.limits), "limits")
			assert.Equal(t, len(c.limits), page.Rounds, "rounds")
		})
	}
}

// The pages a cursor chain visits hold every live item once, in order,
// whatever bound ends each read.
func TestPagerChain(t *testing.T) {
	dead := map[int]bool{}
	for n := range 40 {
		dead[n] = n%3 == 0 || (n > 10 && n < 25)
	}
	client, table := pagerTable(t, 40, dead)
	var want string
	for n := range 40 {
		if !dead[n] {
			want += fmt.Sprintf("%03d ", n)
		}
	}
	for _, p := range []ddb.Pager{{Size: 4}, {Size: 4, Grow: true, Budget: 7}, {Size: 1, MaxRounds: 1, Slack: 2}, {Size: 5, Grow: true, MaxLimit: 3, MaxRounds: 3}} {
		p.Keep = func(it map[string]types.AttributeValue) bool {
			return !it["dead"].(*types.AttributeValueMemberBOOL).Value
		}
		t.Run(strconv.Itoa(p.Size)+fmt.Sprint(p.Budget, p.MaxRounds), func(t *testing.T) {
			in := &dynamodb.QueryInput{
				TableName:                 aws.String(table),
				KeyConditionExpression:    aws.String("pk = :p"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "p"}},
			}
			var got string
			for pages := 0; ; pages++ {
				require.LessOrEqual(t, pages, 40, "no end")
				page, err := p.Fill(context.Background(), client, in)
				require.NoError(t, err)
				require.LessOrEqual(t, len(page.Items), p.Size, "page size")
				got += sks(page.Items)
				if page.Next == nil {
					break
				}
				// Next is an item or a key: the key attributes make the start.
				in.ExclusiveStartKey = map[string]types.AttributeValue{"pk": page.Next["pk"], "sk": page.Next["sk"]}
			}
			assert.Equal(t, want, got, "chain")
		})
	}
}

// TestStartKeyRefused: the start keys DynamoDB refuses are ErrStartKey,
// which is ddb.ErrInvalidCursor, so a forged cursor that slips past a
// service's own range check still answers 400, not 500.
func TestStartKeyRefused(t *testing.T) {
	client, table := pagerTable(t, 3, nil)
	key := func(kv ...string) map[string]types.AttributeValue {
		m := map[string]types.AttributeValue{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = &types.AttributeValueMemberS{Value: kv[i+1]}
		}
		return m
	}
	for _, tt := range []struct {
		name  string
		start map[string]types.AttributeValue
	}{
		{"outside the key condition", key("pk", "p", "sk", "9")},
		{"another partition", key("pk", "q", "sk", "001")},
		{"missing sort key", key("pk", "p")},
		{"extra attribute", key("pk", "p", "sk", "001", "x", "y")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Query(context.Background(), &dynamodb.QueryInput{
				TableName:                 aws.String(table),
				KeyConditionExpression:    aws.String("pk = :p AND begins_with(sk, :z)"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "p"}, ":z": &types.AttributeValueMemberS{Value: "0"}},
				ExclusiveStartKey:         tt.start,
			})
			err = ddb.Wrap("Query", err)
			require.ErrorIs(t, err, ddb.ErrStartKey)
			require.ErrorIs(t, err, ddb.ErrInvalidCursor)
		})
	}
}
