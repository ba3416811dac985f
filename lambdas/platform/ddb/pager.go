package ddb

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// QueryAPI is the one call a Pager makes.
type QueryAPI interface {
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Pager fills one page of a Query whose FilterExpression (or Keep) drops
// items. DynamoDB applies Limit before the filter, so a Query asked for 26
// items can return 3, or none, while more match further on; and a 1 MB
// response ends a round early even without a filter. Fill therefore keeps
// querying until it holds one item more than the page — proof that a next
// page exists, so a cursor never leads to an empty page, as a cursor made
// from LastEvaluatedKey would whenever the range holds a multiple of Size
// items — or the key range is exhausted, or a bound (MaxRounds, Budget)
// ends the read. The zero value of each bound is "none".
type Pager struct {
	// Size is the page size, at least 1.
	Size int
	// Keep drops items after the read (say an item whose TTL has passed,
	// which DynamoDB deletes up to days late); nil keeps every item.
	Keep func(map[string]types.AttributeValue) bool
	// Slack is added to each round's Limit, for items that the filter or
	// Keep is expected to drop.
	Slack int
	// Grow makes each round ask for at least twice the Limit of the one
	// before: a round that was filtered down suggests more dropped items
	// follow.
	Grow bool
	// MaxLimit caps the Limit of one round.
	MaxLimit int
	// MaxRounds bounds the Query calls of one page.
	MaxRounds int
	// Budget bounds the items read (ScannedCount, which is what the page
	// costs) before the filter.
	Budget int
}

// RawPage is what Pager.Fill read, before Query decodes its items and
// turns Next into a cursor.
type RawPage struct {
	// Items are the page's items, at most Pager.Size, in Query order.
	Items []map[string]types.AttributeValue
	// Next is where the next page starts ("" cursor when nil): the page's
	// last item when more items followed it, or the LastEvaluatedKey when
	// a bound ended the read first. The page is short then, but the
	// position is exact: nothing is skipped or read twice. An item carries
	// more than its key, so callers take the key attributes (for a GSI,
	// the index's and the table's) into their cursor.
	Next map[string]types.AttributeValue
	// Rounds counts the Query calls made.
	Rounds int
}

// Fill queries in, starting at in.ExclusiveStartKey, and returns the page.
// It sets in.Limit and in.ExclusiveStartKey for each round. Errors are the
// SDK's, for the caller to Wrap.
func (p Pager) Fill(ctx context.Context, client QueryAPI, in *dynamodb.QueryInput) (*RawPage, error) {
	var (
		items   []map[string]types.AttributeValue
		scanned int
		limit   int
	)
	start := in.ExclusiveStartKey
	for round := 1; ; round++ {
		limit = p.roundLimit(p.Size+1-len(items), limit, scanned)
		in.Limit = aws.Int32(int32(limit))
		in.ExclusiveStartKey = start
		out, err := client.Query(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, it := range out.Items {
			if p.Keep == nil || p.Keep(it) {
				items = append(items, it)
			}
		}
		scanned += int(out.ScannedCount)
		start = out.LastEvaluatedKey
		switch {
		case len(items) > p.Size:
			return &RawPage{Items: items[:p.Size], Next: items[p.Size-1], Rounds: round}, nil
		case len(start) == 0:
			return &RawPage{Items: items, Rounds: round}, nil
		case round == p.MaxRounds, p.Budget > 0 && scanned >= p.Budget:
			return &RawPage{Items: items, Next: start, Rounds: round}, nil
		}
	}
}

// roundLimit is the Limit of a round that needs need more items, after a
// round that asked for prev having read scanned items so far.
func (p Pager) roundLimit(need, prev, scanned int) int {
	n := need + p.Slack
	if p.Grow {
		n = max(n, 2*prev)
	}
	if p.MaxLimit > 0 {
		n = min(n, p.MaxLimit)
	}
	if p.Budget > 0 {
		n = min(n, p.Budget-scanned)
	}
	return n
}
