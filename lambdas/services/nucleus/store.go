package nucleus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/lambdas/platform/cursor"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/ulid"
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
	codec  *cursor.Codec
	now    func() time.Time
	newID  func() string
	// newEntryID makes the unique suffix of audit sort keys.
	newEntryID func(time.Time) string
	// pageLimit caps the items per page of queryAll (0: DynamoDB's 1 MB
	// pages); tests lower it to prove that every page is read.
	pageLimit int32
}

// NewStore returns a Store on tables. cursorKey signs list cursors.
func NewStore(client API, tables Tables, cursorKey []byte) *Store {
	return &Store{
		client:     client,
		tables:     tables,
		codec:      cursor.NewCodec(cursorKey),
		now:        time.Now,
		newID:      uuid.NewString,
		newEntryID: ulid.New,
	}
}

type itemKey struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
}

func (k itemKey) av() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: k.PK},
		"sk": &types.AttributeValueMemberS{Value: k.SK},
	}
}

// get reads one app-table item strongly consistent, so an item is visible
// right after the write that created it. It reports false when absent.
func (s *Store) get(ctx context.Context, key itemKey, out any) (bool, error) {
	res, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.tables.App),
		Key:            key.av(),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return false, storeError("GetItem", err)
	}
	if len(res.Item) == 0 {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return false, fmt.Errorf("nucleus: unmarshal item: %w", err)
	}
	return true, nil
}

// txOp is one item of a transaction plus what to answer when its condition
// fails: onFail gets the item the condition saw (nil when it did not exist)
// and returns the error for the caller.
type txOp struct {
	item   types.TransactWriteItem
	onFail func(old map[string]types.AttributeValue) error
}

func (s *Store) put(table string, item map[string]types.AttributeValue, cond expression.ConditionBuilder, onFail func(map[string]types.AttributeValue) error) (txOp, error) {
	if ddb.ItemSize(item) > ddb.MaxItemBytes {
		return txOp{}, ErrTooLarge
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return txOp{}, fmt.Errorf("nucleus: build expression: %w", err)
	}
	return txOp{item: types.TransactWriteItem{Put: &types.Put{
		TableName:                           aws.String(table),
		Item:                                item,
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, onFail: onFail}, nil
}

func (s *Store) check(key itemKey, cond expression.ConditionBuilder, onFail func(map[string]types.AttributeValue) error) (txOp, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return txOp{}, fmt.Errorf("nucleus: build expression: %w", err)
	}
	return txOp{item: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                           aws.String(s.tables.App),
		Key:                                 key.av(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, onFail: onFail}, nil
}

func (s *Store) update(key itemKey, upd expression.UpdateBuilder, cond expression.ConditionBuilder, onFail func(map[string]types.AttributeValue) error) (txOp, error) {
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return txOp{}, fmt.Errorf("nucleus: build expression: %w", err)
	}
	return txOp{item: types.TransactWriteItem{Update: &types.Update{
		TableName:                           aws.String(s.tables.App),
		Key:                                 key.av(),
		UpdateExpression:                    expr.Update(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, onFail: onFail}, nil
}

func (s *Store) delete(key itemKey, cond expression.ConditionBuilder, onFail func(map[string]types.AttributeValue) error) (txOp, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return txOp{}, fmt.Errorf("nucleus: build expression: %w", err)
	}
	return txOp{item: types.TransactWriteItem{Delete: &types.Delete{
		TableName:                           aws.String(s.tables.App),
		Key:                                 key.av(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, onFail: onFail}, nil
}

// transact writes ops and the audit entry in one TransactWriteItems: the
// change and its audit record commit together or not at all.
func (s *Store) transact(ctx context.Context, entry *AuditEntry, ops ...txOp) error {
	audit, err := s.auditPut(entry)
	if err != nil {
		return err
	}
	ops = append(ops, audit)
	items := make([]types.TransactWriteItem, len(ops))
	for i, op := range ops {
		items[i] = op.item
	}
	_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) {
		return storeError("TransactWriteItems", err)
	}
	// The reasons are read here, in order, because a failed condition must
	// be answered by the operation it belongs to.
	conflict := false
	for i, r := range tc.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "ConditionalCheckFailed":
			if i < len(ops) && ops[i].onFail != nil {
				return ops[i].onFail(r.Item)
			}
		case "TransactionConflict":
			conflict = true
		case "ValidationError":
			if r.Message != nil && ddb.IsSizeMessage(*r.Message) {
				return fmt.Errorf("%w: %w", ErrTooLarge, err)
			}
		}
	}
	if conflict {
		return fmt.Errorf("%w: %w", ErrConcurrentUpdate, err)
	}
	return ddb.Wrap("TransactWriteItems", err)
}

func storeError(op string, err error) error {
	err = ddb.Wrap(op, err)
	if ddb.IsItemTooLarge(err) {
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	return err
}

func notExists() expression.ConditionBuilder {
	return expression.AttributeNotExists(expression.Name("pk"))
}

func exists() expression.ConditionBuilder {
	return expression.AttributeExists(expression.Name("pk"))
}

// always returns err whatever the old item was.
func always(err error) func(map[string]types.AttributeValue) error {
	return func(map[string]types.AttributeValue) error { return err }
}
