package agenticpm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
)

// API is the part of *dynamodb.Client the service calls.
type API = ddb.API

// Store reads and writes the AgenticPM table.
type Store struct {
	client API
	events EventsAPI // nil: released actions wait in the outbox
	bus    string
	// kms encrypts integration credentials with credentialsKey under an
	// encryption context naming stage (nil: PUT /integrations fails).
	kms            KMSAPI
	credentialsKey string
	stage          string
	log            *slog.Logger
	table          string
	codec          *ddb.CursorCodec
	now            func() time.Time
	newID          func() string
	newULID        func(time.Time) string
}

// NewStore returns a Store on table. cursorKey signs list cursors.
func NewStore(client API, table string, cursorKey []byte) *Store {
	return &Store{client: client, table: table, codec: ddb.NewCursorCodec(cursorKey),
		now: time.Now, newID: uuid.NewString, newULID: ids.NewULID, log: slog.Default()}
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		contract.AttrPK: &types.AttributeValueMemberS{Value: pk},
		contract.AttrSK: &types.AttributeValueMemberS{Value: sk},
	}
}

// live reports whether item has not expired. DynamoDB deletes expired
// items up to days late, and until then they read like live ones.
func live(item map[string]types.AttributeValue, now time.Time) bool {
	n, ok := item[contract.AttrTTL].(*types.AttributeValueMemberN)
	if !ok {
		return true
	}
	var ttl int64
	if _, err := fmt.Sscan(n.Value, &ttl); err != nil {
		return true
	}
	return ttl > now.Unix()
}

// get reads one item strongly consistently into out; found is false for a
// missing or expired item.
func (s *Store) get(ctx context.Context, pk, sk string, out any) (bool, error) {
	item, err := ddb.Get(ctx, s.client, s.table, key(pk, sk))
	if err != nil {
		return false, storeError("GetItem", err)
	}
	if item == nil || !live(item, s.now()) {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(item, out); err != nil {
		return false, fmt.Errorf("agenticpm: unmarshal %s/%s: %w", pk, sk, err)
	}
	return true, nil
}

// marshalItem marshals v and refuses it before any write when it would not
// fit in an item.
func marshalItem(v any) (map[string]types.AttributeValue, error) {
	item, err := ddb.MarshalItem(v, keyAttrs...)
	if err != nil {
		var de *docError
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, fmt.Errorf("agenticpm: marshal item: %w", err)
	}
	if n := ddb.ItemSize(item); n > ddb.MaxItemBytes {
		return nil, &TooLargeError{What: "the item", Size: n, Limit: ddb.MaxItemBytes}
	}
	return item, nil
}

// putNew is the transaction Put writing v as a new item; onFail is what
// an existing one means (nil: a collision, which cannot happen).
func (s *Store) putNew(v any, onFail error) (ddb.TxOp, error) {
	item, err := marshalItem(v)
	if err != nil {
		return ddb.TxOp{}, err
	}
	// Keys are unique by construction (UUIDs, ULIDs), so a collision is
	// an error, not an update.
	put := ddb.NotExists(contract.AttrPK).TxPut(s.table, item)
	put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	return ddb.TxOp{OnFail: onFail, Item: types.TransactWriteItem{Put: put}}, nil
}

// putAny is the transaction Put writing an item whether or not it exists
// (an upsert of a caller-named item).
func (s *Store) putAny(item map[string]types.AttributeValue) ddb.TxOp {
	return ddb.TxOp{Item: types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: item}}}
}

// create writes a new item outside a transaction (which would cost
// double for a single write).
func (s *Store) create(ctx context.Context, item map[string]types.AttributeValue) error {
	return storeError("PutItem", ddb.Create(ctx, s.client, s.table, item, contract.AttrPK))
}

// createInProject writes v as a new item under an existing project.
func (s *Store) createInProject(ctx context.Context, projectID string, v any, onFail error) error {
	put, err := s.putNew(v, onFail)
	if err != nil {
		return err
	}
	return s.transactInProject(ctx, projectID, ddb.Tx{put})
}

// transactInProject runs tx in one transaction behind a ConditionCheck
// that the project exists, so that nothing is written under a missing or
// deleted project; that check failing is a NotFoundError.
func (s *Store) transactInProject(ctx context.Context, projectID string, tx ddb.Tx) error {
	var all ddb.Tx
	all.Check(ddb.Exists(contract.AttrPK).TxCheck(s.table, key(contract.ProjectPK(projectID), contract.KeyMetadata)), &NotFoundError{Entity: "project", ID: projectID})
	return storeError("TransactWriteItems", append(all, tx...).Run(ctx, s.client))
}

// update runs one conditional UpdateItem, written out (ddb.Expr: its shape
// is the same on every request, so the SDK's expression builder would
// only render the same strings again), returning the new item into out.
// When the condition fails, the error carries the old item (ALL_OLD), so
// callers tell "missing" from "wrong state" without reading first.
// An empty e.Condition makes it an upsert.
func (s *Store) update(ctx context.Context, pk, sk string, e ddb.Expr, out any) error {
	item, err := ddb.UpdateExpr(ctx, s.client, s.table, key(pk, sk), e)
	if err != nil {
		return storeError("UpdateItem", err)
	}
	if err := attributevalue.UnmarshalMap(item, out); err != nil {
		return fmt.Errorf("agenticpm: unmarshal %s/%s: %w", pk, sk, err)
	}
	return nil
}

// liveCond is the condition (or filter) that an item has not expired:
// no TTL, or one after :now (unixNumber), its name #ttl.
const liveCond = "(attribute_not_exists(#ttl) OR #ttl > :now)"

// unixNumber is t in Unix seconds as a DynamoDB number.
func unixNumber(t time.Time) types.AttributeValue { return ddb.N(t.Unix()) }

// put writes item unconditionally (an upsert of a caller-named item).
func (s *Store) put(ctx context.Context, item map[string]types.AttributeValue) error {
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	return storeError("PutItem", err)
}

func storeError(op string, err error) error {
	return ddb.WrapAs(op, ddb.WrapAs(op, err, ddb.ErrItemTooLarge, ErrTooLarge), ddb.ErrConflict, ErrBusy)
}

// pageKey is a position in a listing: the table key, plus the index key
// for GSI1 listings (an index's LastEvaluatedKey carries both).
type pageKey struct {
	PK     string `json:"p"`
	SK     string `json:"s"`
	GSI1PK string `json:"gp,omitempty" dynamodbav:",omitempty"`
	GSI1SK string `json:"gs,omitempty" dynamodbav:",omitempty"`
}

// listing is one access pattern: a partition of the table or of GSI1, an
// optional sort key prefix and an order.
type listing struct {
	view        string // names the access pattern in the cursor scope
	index       bool   // GSI1 instead of the table
	pk          string // PK, or GSI1PK with index
	prefix      string // begins_with on SK (GSI1SK with index); "" for all
	newestFirst bool
}

// scope binds a cursor to the access pattern and its partition: a cursor
// of one project's events does not page another project's.
func (l listing) scope() string { return "agenticpm/" + l.view + "/" + l.pk }

func (l listing) contains(k pageKey) bool {
	if k.PK == "" || k.SK == "" {
		return false
	}
	if l.index {
		return k.GSI1PK == l.pk && strings.HasPrefix(k.GSI1SK, l.prefix)
	}
	return k.PK == l.pk && strings.HasPrefix(k.SK, l.prefix) && k.GSI1PK == "" && k.GSI1SK == ""
}

// Page is one page of a listing of T.
type Page[T any] struct {
	Items []T `json:"items"`
	// Next is the cursor of the next page, "" on the last page.
	Next string `json:"nextCursor,omitempty"`
}

// listPage returns up to limit live items of l after the position in
// cursor after ("" for the first page), and the cursor of the next page.
//
// Expired items are dropped by a FilterExpression, which DynamoDB applies
// after Limit: a Query asked for 26 items can return 3. So the pager keeps
// querying, with growing limits, until it has one item more than the page
// or the partition is exhausted. Only when maxQueryRounds run out first is
// the page short; its cursor then points past the skipped expired items, so
// the next page continues exactly there.
func listPage[T any](ctx context.Context, s *Store, l listing, after string, limit int) (*Page[T], error) {
	if limit <= 0 || limit > MaxPageSize {
		limit = DefaultPageSize
	}
	pkName, skName := contract.AttrPK, contract.AttrSK
	if l.index {
		pkName, skName = contract.AttrGSI1PK, contract.AttrGSI1SK
	}
	now := s.now()
	q := ddb.Expr{
		KeyCondition: "#pk = :pk",
		Filter:       liveCond,
		Names:        map[string]string{"#pk": pkName, "#ttl": contract.AttrTTL},
		Values:       map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: l.pk}, ":now": unixNumber(now)},
	}
	if l.prefix != "" {
		q.KeyCondition = "#pk = :pk AND begins_with(#sk, :prefix)"
		q.Names["#sk"], q.Values[":prefix"] = skName, &types.AttributeValueMemberS{Value: l.prefix}
	}
	in := q.Query(s.table)
	in.ScanIndexForward = aws.Bool(!l.newestFirst)
	// GSIs only offer eventually consistent reads; the table reads its
	// own writes.
	in.ConsistentRead = aws.Bool(!l.index)
	if l.index {
		in.IndexName = aws.String(contract.IndexGSI1)
	}
	page, err := ddb.Query[T, pageKey]{
		Input: in,
		Pager: ddb.Pager{Size: limit, Grow: true, MaxLimit: maxRoundLimit, MaxRounds: maxQueryRounds,
			// The filter saw the same clock; belt and braces.
			Keep: func(it map[string]types.AttributeValue) bool { return live(it, now) }},
		Codec: s.codec,
		Scope: l.scope(),
		StartKey: func(k pageKey) (map[string]types.AttributeValue, error) {
			return ddb.MarshalItem(k, keyAttrs...)
		},
		// The MAC binds the cursor to the scope already; checking the key
		// keeps that true if the scope format ever changes.
		Check: func(k pageKey) error {
			if !l.contains(k) {
				return ddb.ErrInvalidCursor
			}
			return nil
		},
		KeyOf: l.positionOf,
	}.Page(ctx, s.client, after)
	if err != nil {
		return nil, storeError("Query", err)
	}
	return &Page[T]{Items: page.Items, Next: page.Next}, nil
}

// positionOf is the cursor key of an item: a table position must not carry
// the index key, or DynamoDB rejects it as a start key.
func (l listing) positionOf(item map[string]types.AttributeValue) (pageKey, error) {
	var k pageKey
	if err := attributevalue.UnmarshalMap(item, &k); err != nil {
		return k, fmt.Errorf("agenticpm: page key: %w", err)
	}
	if !l.index {
		k.GSI1PK, k.GSI1SK = "", ""
	}
	return k, nil
}
