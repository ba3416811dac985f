package stak

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Erasure is the report of erasing one user of a tenant
// (docs/schemas/stak.md, "Runbook: erase a user").
type Erasure struct {
	Tenant string `json:"tenant_key"`
	UID    string `json:"uid"`
	// Inboxes lists the tenant's inboxes whose user partition was erased.
	Inboxes []string `json:"inboxes"`
	// Messages and Receipts count the user messages and the read receipts
	// of public messages deleted; Counters the counter items (c#…) and
	// Markers the stream dedupe markers (e#…) deleted.
	Messages int `json:"messages"`
	Receipts int `json:"receipts"`
	Counters int `json:"counters"`
	Markers  int `json:"markers"`
	// Passes counts passes over the partitions (more than one per inbox
	// when publishes, marks or expiries raced with the erasure).
	Passes int `json:"passes"`
	// Unsettled names the inboxes whose partition still held items after
	// RecountAttempts passes (publishes to the user never stopped): stop
	// them and run the erasure again. Empty when the erasure is complete.
	Unsettled []string `json:"unsettled"`
}

// Done reports whether the erasure left nothing of the user.
func (e *Erasure) Done() bool { return len(e.Unsettled) == 0 }

// Eraser erases users. It runs with an operator's credentials, not a
// function's (lambdas/ops/stak-erase): no deployed role may delete items.
type Eraser struct {
	s      *Store
	client EraseAPI
}

// EraseAPI is what an Eraser calls: the service's calls and DeleteItem,
// which no function of the service makes.
type EraseAPI interface {
	API
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// NewEraser returns an Eraser on table.
func NewEraser(client EraseAPI, table string) *Eraser {
	return &Eraser{s: &Store{client: client, table: table}, client: client}
}

// errItemMoved: an item changed (marked read, expired, deleted) between
// the erasure's read and its delete; the next pass reads it again.
var errItemMoved = errors.New("stak: item changed during erasure")

// EraseUser deletes everything the inbox table holds about uid of tenant,
// in every inbox of the tenant: the user's messages (each copy is
// addressed to the user alone, decision 9), the read receipts of public
// messages, the user's counters and the stream markers of the user's
// partition. Public messages (addressed to everyone) stay.
//
// The counters are exact at every moment, so an erasure that stops half
// way leaves a partition a recount finds right: each message or receipt
// is deleted in one transaction with the decrement of the counters it was
// counted in, on the condition that it is still as read (present, and
// read or unread as it was); a counter is deleted only when no message is
// left, on the condition that it still holds the value read, so a publish
// that lands in between fails the delete and the pass starts over.
// Running it again is harmless; a second run reports nothing deleted.
func (e *Eraser) EraseUser(ctx context.Context, tenant, uid string) (*Erasure, error) {
	if uid == contract.PublicUID {
		return nil, fmt.Errorf("%w: %s is the public partition, not a user", ErrInvalidKey, contract.PublicUID)
	}
	for _, k := range []string{tenant, uid} {
		if msg := checkKey(k); msg != "" {
			return nil, fmt.Errorf("%w: %q %s", ErrInvalidKey, k, msg)
		}
	}
	res := &Erasure{Tenant: tenant, UID: uid, Inboxes: []string{}, Unsettled: []string{}}
	err := e.s.queryAll(ctx, prefixQuery(contract.TenantPK(tenant), contract.PrefixInbox), func(item map[string]types.AttributeValue) error {
		res.Inboxes = append(res.Inboxes, strings.TrimPrefix(sortKey(item), contract.PrefixInbox))
		return nil
	})
	if err != nil {
		return res, err
	}
	for _, inbox := range res.Inboxes {
		settled, err := e.erasePartition(ctx, Partition{Tenant: tenant, UID: uid, Inbox: inbox}, res)
		if err != nil {
			return res, err
		}
		if !settled {
			res.Unsettled = append(res.Unsettled, inbox)
		}
	}
	return res, nil
}

// erasePartition empties p, pass after pass, until a pass finds it empty.
func (e *Eraser) erasePartition(ctx context.Context, p Partition, res *Erasure) (bool, error) {
	for attempt := 1; attempt <= RecountAttempts; attempt++ {
		res.Passes++
		moved, err := e.deleteMessages(ctx, p, res)
		if err != nil {
			return false, err
		}
		if err := e.deleteMarkers(ctx, p, res); err != nil {
			return false, err
		}
		if !moved {
			var left bool
			left, moved, err = e.deleteCounters(ctx, p, res)
			if err != nil {
				return false, err
			}
			moved = moved || left
		}
		if !moved {
			empty, err := e.empty(ctx, p)
			if err != nil || empty {
				return empty, err
			}
		}
		if err := backoff(ctx, attempt); err != nil {
			return false, err
		}
	}
	return false, nil
}

// deleteMessages deletes every m# item of p with its counters' decrement;
// moved reports an item that changed under the pass.
func (e *Eraser) deleteMessages(ctx context.Context, p Partition, res *Erasure) (moved bool, err error) {
	q := prefixQuery(p.PK(), contract.PrefixMessage)
	q.Projection = "#sk, #kind, #readat, #taxonomy"
	q.Names["#kind"], q.Names["#readat"], q.Names["#taxonomy"] = contract.AttrKind, contract.AttrReadAt, contract.AttrTaxonomy
	var items []map[string]types.AttributeValue
	if err := e.s.queryAll(ctx, q, func(item map[string]types.AttributeValue) error {
		items = append(items, item)
		return nil
	}); err != nil {
		return false, err
	}
	for _, item := range items {
		var doc struct {
			Kind     string   `dynamodbav:"kind"`
			ReadAt   *int64   `dynamodbav:"readat"`
			Taxonomy Taxonomy `dynamodbav:"taxonomy"`
		}
		if err := attributevalue.UnmarshalMap(item, &doc); err != nil {
			return false, fmt.Errorf("stak: unmarshal %s: %w", sortKey(item), err)
		}
		receipt := doc.Kind == ""
		published, read := 0, 0
		if !receipt {
			published = -1
		}
		if receipt || doc.ReadAt != nil {
			read = -1
		}
		// Present, and read or unread as counted: a mark that lands in
		// between moves the read counter and fails this.
		cond := ddb.Expr{Condition: "attribute_exists(#pk) AND attribute_not_exists(#readat)",
			Names: map[string]string{"#pk": contract.AttrPK, "#readat": contract.AttrReadAt}}
		if doc.ReadAt != nil {
			cond.Condition = "attribute_exists(#pk) AND #readat = :readat"
			cond.Values = map[string]types.AttributeValue{":readat": ddb.N(*doc.ReadAt)}
		}
		var tx ddb.Tx
		tx.Delete(cond.TxDelete(e.s.table, key(p.PK(), sortKey(item))), errItemMoved)
		err := e.s.transact(ctx, append(tx, e.s.counterUpdates(p, doc.Taxonomy.Category, published, read, 0)...))
		switch {
		case errors.Is(err, errItemMoved):
			moved = true
		case err != nil:
			return false, err
		case receipt:
			res.Receipts++
		default:
			res.Messages++
		}
	}
	return moved, nil
}

// deleteMarkers deletes p's stream dedupe markers (the consumer's, two
// days each): nothing counts them.
func (e *Eraser) deleteMarkers(ctx context.Context, p Partition, res *Erasure) error {
	var sks []string
	if err := e.s.queryAll(ctx, prefixQuery(p.PK(), contract.PrefixMarker), func(item map[string]types.AttributeValue) error {
		sks = append(sks, sortKey(item))
		return nil
	}); err != nil {
		return err
	}
	for _, sk := range sks {
		if _, err := e.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(e.s.table), Key: key(p.PK(), sk)}); err != nil {
			return fmt.Errorf("stak: delete marker: %w", err)
		}
		res.Markers++
	}
	return nil
}

// deleteCounters deletes p's counter items once no message is left: the
// counters are read first, then the messages, and each counter is deleted
// only if it still holds the value read. left reports messages found (a
// publish landed), moved a counter that changed under the pass.
func (e *Eraser) deleteCounters(ctx context.Context, p Partition, res *Erasure) (left, moved bool, err error) {
	current, err := e.s.readCounters(ctx, p)
	if err != nil {
		return false, false, err
	}
	_, n, err := e.s.countItems(ctx, p)
	if err != nil || n > 0 {
		return n > 0, false, err
	}
	for _, sk := range counterKeys(current, nil) {
		cur := current[sk]
		d := ddb.Expr{Names: map[string]string{"#pk": contract.AttrPK}, Values: map[string]types.AttributeValue{}}
		d.Condition = "attribute_exists(#pk) AND " + held(d, contract.AttrPublished, cur.hasPubl, cur.published) + " AND " + held(d, contract.AttrRead, cur.hasRead, cur.read)
		if len(d.Values) == 0 {
			d.Values = nil
		}
		_, err := e.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(e.s.table), Key: key(p.PK(), sk), ConditionExpression: aws.String(d.Condition),
			ExpressionAttributeNames: d.Names, ExpressionAttributeValues: d.Values,
		})
		err = ddb.WrapCond("DeleteItem", err, errItemMoved)
		if errors.Is(err, errItemMoved) {
			moved = true
			continue
		}
		if err != nil {
			return false, false, err
		}
		res.Counters++
	}
	return false, moved, nil
}

// empty reports whether p holds no item at all, strongly consistent.
func (e *Eraser) empty(ctx context.Context, p Partition) (bool, error) {
	out, err := e.s.client.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(e.s.table), ConsistentRead: aws.Bool(true), Limit: aws.Int32(1),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": contract.AttrPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: p.PK()}},
	})
	if err != nil {
		return false, fmt.Errorf("stak: query %s: %w", p.PK(), err)
	}
	return len(out.Items) == 0, nil
}
