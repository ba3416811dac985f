package nucleus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
)

// API is the part of *dynamodb.Client the service calls.
type API = ddb.API

// Tables names the two tables.
type Tables struct {
	App   string
	Audit string
}

// Store reads and writes accounts, schedules, targeted resources and audit
// entries.
type Store struct {
	client API
	tables Tables
	codec  *ddb.CursorCodec
	now    func() time.Time
	newID  func() string
	// newExternalID generates accounts' external ids (NewExternalID).
	newExternalID func() string
	// newEntryID makes the unique suffix of audit sort keys.
	newEntryID func(time.Time) string
	// pageLimit caps the items per page of queryAll (0: DynamoDB's 1 MB
	// pages); tests lower it to prove that every page is read.
	pageLimit int32
}

// NewStore returns a Store on tables. cursorKey signs list cursors.
func NewStore(client API, tables Tables, cursorKey []byte) *Store {
	return &Store{
		client:        client,
		tables:        tables,
		codec:         ddb.NewCursorCodec(cursorKey),
		now:           time.Now,
		newID:         uuid.NewString,
		newExternalID: NewExternalID,
		newEntryID:    ids.NewULID,
	}
}

// keyAttrs are the key attributes of both tables: the item structs name
// them in upper case (PK for pk) and marshal with ddb.MarshalItem.
var keyAttrs = []string{contract.AttrPK, contract.AttrSK, contract.AttrGSI1PK, contract.AttrGSI1SK}

type itemKey struct {
	PK string
	SK string
}

func (k itemKey) av() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		contract.AttrPK: &types.AttributeValueMemberS{Value: k.PK},
		contract.AttrSK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

// get reads one app-table item strongly consistent, so an item is visible
// right after the write that created it. It reports false when absent.
func (s *Store) get(ctx context.Context, key itemKey, out any) (bool, error) {
	item, err := ddb.Get(ctx, s.client, s.tables.App, key.av())
	if err != nil {
		return false, storeError("GetItem", err)
	}
	if item == nil {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(item, out); err != nil {
		return false, fmt.Errorf("nucleus: unmarshal item: %w", err)
	}
	return true, nil
}

// put, check, update and delete make the operations of a transaction from
// an expression written out (ddb.Expr: the update, where there is one, and
// the condition); each carries the error its failed condition means
// (ddb.MissingOr when that depends on whether the item existed) and asks
// for the old item.
func (s *Store) put(table string, item map[string]types.AttributeValue, cond ddb.Expr, onFail error) (ddb.TxOp, error) {
	if ddb.ItemSize(item) > ddb.MaxItemBytes {
		return ddb.TxOp{}, ErrTooLarge
	}
	p := cond.TxPut(table, item)
	p.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	return ddb.TxOp{Item: types.TransactWriteItem{Put: p}, OnFail: onFail}, nil
}

func (s *Store) check(key itemKey, cond ddb.Expr, onFail error) ddb.TxOp {
	c := cond.TxCheck(s.tables.App, key.av())
	c.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	return ddb.TxOp{Item: types.TransactWriteItem{ConditionCheck: c}, OnFail: onFail}
}

func (s *Store) update(key itemKey, e ddb.Expr, onFail error) ddb.TxOp {
	u := e.TxUpdate(s.tables.App, key.av())
	u.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	return ddb.TxOp{Item: types.TransactWriteItem{Update: u}, OnFail: onFail}
}

func (s *Store) delete(key itemKey, cond ddb.Expr, onFail error) ddb.TxOp {
	d := cond.TxDelete(s.tables.App, key.av())
	d.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	return ddb.TxOp{Item: types.TransactWriteItem{Delete: d}, OnFail: onFail}
}

// commit writes ops with a successful audit entry of action on e by user.
func (s *Store) commit(ctx context.Context, now time.Time, user string, e Entity, action Action, details any, ops ...ddb.TxOp) error {
	entry, err := s.entry(now, user, e, action, StatusSuccess, details)
	if err != nil {
		return err
	}
	return s.transact(ctx, entry, ops...)
}

// transact writes ops and the audit entry in one TransactWriteItems: the
// change and its audit record commit together or not at all. A failed
// condition is the meaning of its operation; a conflict with another
// transaction is ErrConcurrentUpdate.
func (s *Store) transact(ctx context.Context, entry *AuditEntry, ops ...ddb.TxOp) error {
	audit, err := s.auditPut(entry)
	if err != nil {
		return err
	}
	tx := append(ddb.Tx(slices.Clone(ops)), audit)
	err = storeError("TransactWriteItems", tx.Run(ctx, s.client))
	if errors.Is(err, ddb.ErrConflict) {
		return fmt.Errorf("%w: %w", ErrConcurrentUpdate, err)
	}
	return err
}

func storeError(op string, err error) error {
	return ddb.WrapAs(op, err, ddb.ErrItemTooLarge, ErrTooLarge)
}

// pkAbsent and pkPresent are the conditions that the item does not, or
// does, exist. Shared by every request: never written to.
var (
	pkAbsent  = ddb.NotExists(contract.AttrPK)
	pkPresent = ddb.Exists(contract.AttrPK)
)

// partition is the key condition of the items whose attr (pk, or gsi1pk
// in GSI1) is value, the whole partition.
func partition(attr, value string) ddb.Expr {
	return ddb.Expr{KeyCondition: "#pk = :pk", Names: map[string]string{"#pk": attr},
		Values: map[string]types.AttributeValue{":pk": ddb.S(value)}}
}
