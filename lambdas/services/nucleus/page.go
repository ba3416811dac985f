package nucleus

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// pageKey is a position in a table or in GSI1, carried inside a cursor. An
// index position must include the table key too; a table position must not
// include the index key, or DynamoDB rejects it.
type pageKey struct {
	PK     string `json:"p"`
	SK     string `json:"s"`
	GSI1PK string `json:"gp,omitempty" dynamodbav:",omitempty"`
	GSI1SK string `json:"gs,omitempty" dynamodbav:",omitempty"`
}

// listing describes one paginated query.
type listing struct {
	table string
	// scope binds cursors to this query (partition, filters, bounds).
	scope string
	index bool
	// partition is the partition key value; a cursor must carry it.
	partition string
	// expr is the key condition and the filter ("" for none), written
	// out.
	expr    ddb.Expr
	forward bool
	size    int
	// keep drops items after the read (e.g. a schedule's METADATA item
	// among its resources); slack is added to each round's Limit for them.
	keep       func(map[string]types.AttributeValue) bool
	slack      int
	consistent bool
	// below: for descending queries with a moving lower bound, a cursor
	// whose sort key sorts below it is past the end. Querying from it
	// would be a ValidationException (start key outside the key condition).
	below string
	// above is the query's upper sort-key bound: a cursor above it lies
	// outside the key condition, which only a forged cursor does.
	above string
}

// list returns up to l.size items after the position in token ("" for the
// first page) and the cursor of the next page, "" when there is none.
//
// Pages are filled: DynamoDB applies Limit before a FilterExpression, so one
// query can return few or no items although more match further on. list
// keeps querying until it has one item more than a page (proof that a next
// page exists; the cursor is then the last returned item, never an empty
// page) or the partition is exhausted. After maxRounds queries it stops and
// returns what it has with a cursor at LastEvaluatedKey: a short page, but
// an honest cursor, since more items remain to be examined.
func (s *Store) list(ctx context.Context, l listing, token string) ([]map[string]types.AttributeValue, string, error) {
	in := l.expr.Query(l.table)
	in.ScanIndexForward = aws.Bool(l.forward)
	in.ConsistentRead = aws.Bool(l.consistent)
	if l.index {
		in.IndexName = aws.String(contract.IndexGSI1)
	}
	slack := l.slack
	if l.expr.Filter != "" {
		slack = max(slack, l.size)
	}
	q := s.query(l)
	q.Input, q.Pager = in, ddb.Pager{Size: l.size, Keep: l.keep, Slack: slack, MaxRounds: maxRounds}
	page, err := q.Page(ctx, s.client, token)
	if err != nil {
		return nil, "", storeError("Query", err)
	}
	return page.Items, page.Next, nil
}

// query is l's cursor handling, for list and for checking the cursor of a
// range known to be empty.
func (s *Store) query(l listing) ddb.Query[map[string]types.AttributeValue, pageKey] {
	return ddb.Query[map[string]types.AttributeValue, pageKey]{Codec: s.codec, Scope: l.scope, Check: l.check, KeyOf: l.keyOf,
		StartKey: func(k pageKey) (map[string]types.AttributeValue, error) { return ddb.MarshalItem(k, keyAttrs...) }}
}

// check keeps a cursor inside the query's partition and sort-key range:
// cursors are not secret (docs/functions.md), so this is what stops a
// forged one.
func (l listing) check(k pageKey) error {
	partition, sort := k.PK, k.SK
	if l.index {
		partition, sort = k.GSI1PK, k.GSI1SK
		if k.GSI1SK == "" {
			return ddb.ErrInvalidCursor
		}
	} else if k.GSI1PK != "" || k.GSI1SK != "" {
		return ddb.ErrInvalidCursor
	}
	if partition != l.partition || k.PK == "" || k.SK == "" || (l.above != "" && sort > l.above) {
		return ddb.ErrInvalidCursor
	}
	if l.below != "" && sort < l.below {
		return ddb.ErrPastEnd
	}
	return nil
}

// keyOf is the cursor key of an item; a table position must not carry the
// index key, or DynamoDB rejects it as a start key.
func (l listing) keyOf(item map[string]types.AttributeValue) (pageKey, error) {
	var k pageKey
	if err := attributevalue.UnmarshalMap(item, &k); err != nil {
		return k, fmt.Errorf("nucleus: unmarshal page key: %w", err)
	}
	if !l.index {
		k.GSI1PK, k.GSI1SK = "", ""
	}
	return k, nil
}

// pageSize returns n clamped to 1..MaxPageSize, DefaultPageSize for 0.
func pageSize(n int) int {
	if n <= 0 {
		return DefaultPageSize
	}
	return min(n, MaxPageSize)
}
