package ddb

import (
	"context"
	"errors"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// GetAPI is the one call Get makes.
type GetAPI interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// UpdateAPI is the one call UpdateExpr makes.
type UpdateAPI interface {
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// Get reads the item at key strongly consistently, so that a store reads
// its own writes; nil when there is none. Errors are Wrapped.
func Get(ctx context.Context, client GetAPI, table string, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, Wrap("GetItem", err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	return out.Item, nil
}

// PutNew is the PutItem of an item that must not overwrite one: it is
// conditioned on keyAttr, the partition key, not existing. Keys made
// unique by construction (UUIDs, ULIDs) turn the impossible collision
// into ErrConditionFailed instead of a silent overwrite; a caller that
// wants the item it collided with asks for ALL_OLD on the input.
func PutNew(table string, item map[string]types.AttributeValue, keyAttr string) (*dynamodb.PutItemInput, error) {
	// Written out rather than built with the expression package: the
	// builder parses and renders on every call, which cost a create
	// about a fifth of its handler CPU (docs/functions.md, "Request
	// path") for a condition that never changes.
	cond := NotExists(keyAttr)
	return &dynamodb.PutItemInput{
		TableName:                aws.String(table),
		Item:                     item,
		ConditionExpression:      aws.String(cond.Condition),
		ExpressionAttributeNames: cond.Names,
	}, nil
}

// Exists is the condition that the item has attr; of its partition key,
// that the item exists.
func Exists(attr string) Expr {
	return Expr{Condition: "attribute_exists(#k)", Names: map[string]string{"#k": attr}}
}

// NotExists is the condition that the item lacks attr; of its partition
// key, that there is no item.
func NotExists(attr string) Expr {
	return Expr{Condition: "attribute_not_exists(#k)", Names: map[string]string{"#k": attr}}
}

// Expr is an expression written out: an update and its condition, or a
// query's key condition, filter and projection, and the names and values
// they refer to. A route's expression has the same shape on every
// request, so writing it once costs nothing per request; the SDK's
// expression builder renders the same strings again each time, which is
// the largest part of an update's handler CPU beside the SDK's own
// (docs/functions.md, "Request path"). Names and Values must hold exactly
// the placeholders used: DynamoDB refuses unused ones.
type Expr struct {
	Update, Condition                string
	KeyCondition, Filter, Projection string
	Names                            map[string]string
	Values                           map[string]types.AttributeValue
}

// UpdateExpr runs one UpdateItem of e's update, conditioned on e's
// condition ("": an upsert), and returns the item after it. It asks for
// the item as it was when the condition fails, so that the caller tells
// "missing" from "wrong state" without a read first (IfConditionFailed,
// OldItem). Errors are Wrapped.
func UpdateExpr(ctx context.Context, client UpdateAPI, table string, key map[string]types.AttributeValue, e Expr) (map[string]types.AttributeValue, error) {
	in := &dynamodb.UpdateItemInput{
		TableName:                           aws.String(table),
		Key:                                 key,
		UpdateExpression:                    aws.String(e.Update),
		ConditionExpression:                 e.str(e.Condition),
		ExpressionAttributeNames:            e.names(),
		ExpressionAttributeValues:           e.values(),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	out, err := client.UpdateItem(ctx, in)
	if err != nil {
		return nil, Wrap("UpdateItem", err)
	}
	return out.Attributes, nil
}

// TxUpdate is the transaction Update of e (its update and condition) on
// key; the caller may set ReturnValuesOnConditionCheckFailure on it.
func (e Expr) TxUpdate(table string, key map[string]types.AttributeValue) *types.Update {
	return &types.Update{
		TableName: aws.String(table), Key: key,
		UpdateExpression: aws.String(e.Update), ConditionExpression: e.str(e.Condition),
		ExpressionAttributeNames: e.names(), ExpressionAttributeValues: e.values(),
	}
}

// TxCheck is the transaction ConditionCheck of e's condition on key.
func (e Expr) TxCheck(table string, key map[string]types.AttributeValue) *types.ConditionCheck {
	return &types.ConditionCheck{
		TableName: aws.String(table), Key: key, ConditionExpression: aws.String(e.Condition),
		ExpressionAttributeNames: e.names(), ExpressionAttributeValues: e.values(),
	}
}

// TxPut is the transaction Put of item under e's condition (none when
// it is "").
func (e Expr) TxPut(table string, item map[string]types.AttributeValue) *types.Put {
	return &types.Put{
		TableName: aws.String(table), Item: item, ConditionExpression: e.str(e.Condition),
		ExpressionAttributeNames: e.names(), ExpressionAttributeValues: e.values(),
	}
}

// TxDelete is the transaction Delete of key under e's condition (none
// when it is "").
func (e Expr) TxDelete(table string, key map[string]types.AttributeValue) *types.Delete {
	return &types.Delete{
		TableName: aws.String(table), Key: key, ConditionExpression: e.str(e.Condition),
		ExpressionAttributeNames: e.names(), ExpressionAttributeValues: e.values(),
	}
}

// Put is the PutItem of item under e's condition (none when it is ""); the
// return values are the caller's to set.
func (e Expr) Put(table string, item map[string]types.AttributeValue) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{
		TableName: aws.String(table), Item: item, ConditionExpression: e.str(e.Condition),
		ExpressionAttributeNames: e.names(), ExpressionAttributeValues: e.values(),
	}
}

// Query is the QueryInput of e's key condition, filter and projection on
// table; the index, order, consistency and limit are the caller's to set.
func (e Expr) Query(table string) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName: aws.String(table), KeyConditionExpression: aws.String(e.KeyCondition),
		FilterExpression: e.str(e.Filter), ProjectionExpression: e.str(e.Projection),
		ExpressionAttributeNames: e.names(), ExpressionAttributeValues: e.values(),
	}
}

// str is s as an optional field of an input: nil when empty.
func (Expr) str(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

// names and values leave out an empty map: DynamoDB refuses one.
func (e Expr) names() map[string]string {
	if len(e.Names) == 0 {
		return nil
	}
	return e.Names
}

func (e Expr) values() map[string]types.AttributeValue {
	if len(e.Values) == 0 {
		return nil
	}
	return e.Values
}

// PutAPI is the part of a client Create calls.
type PutAPI interface {
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// Create writes item, whose key keyAttr must not exist yet (PutNew), and
// survives a lost answer: when DynamoDB applied the Put and its answer was
// lost, the SDK's retry of the same request fails the condition, and the
// item it finds (ALL_OLD) is the one this call wrote, so Create succeeds
// as the first attempt would have. A different item under the key is
// ErrConditionFailed, as from PutNew. Errors are Wrapped.
func Create(ctx context.Context, client PutAPI, table string, item map[string]types.AttributeValue, keyAttr string) error {
	put, err := PutNew(table, item, keyAttr)
	if err != nil {
		return err
	}
	put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	_, err = client.PutItem(ctx, put)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && SameItem(ccf.Item, item) {
		return nil
	}
	return Wrap("PutItem", err)
}

// SameItem reports whether two items hold the same attributes and values,
// reading an empty list, map or set and an absent one alike (the SDK
// decodes DynamoDB's [] as either).
func SameItem(a, b map[string]types.AttributeValue) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || !sameValue(av, bv) {
			return false
		}
	}
	return true
}

func sameValue(a, b types.AttributeValue) bool {
	switch a := a.(type) {
	case *types.AttributeValueMemberL:
		b, ok := b.(*types.AttributeValueMemberL)
		if !ok || len(a.Value) != len(b.Value) {
			return false
		}
		for i := range a.Value {
			if !sameValue(a.Value[i], b.Value[i]) {
				return false
			}
		}
		return true
	case *types.AttributeValueMemberM:
		b, ok := b.(*types.AttributeValueMemberM)
		return ok && SameItem(a.Value, b.Value)
	}
	return reflect.DeepEqual(a, b)
}
