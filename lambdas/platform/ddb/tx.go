package ddb

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TxAPI is the one call a Tx makes.
type TxAPI interface {
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// TxOp is one operation of a transaction and the error its failed
// condition means (nil: none, the cancellation is classified only).
type TxOp struct {
	Item   types.TransactWriteItem
	OnFail error
}

// Tx is a TransactWriteItems under construction. Each operation carries
// what its failed condition means, because DynamoDB reports a cancellation
// as a list of reasons by position, and only the code that added an
// operation knows what its condition stood for. A Tx is a slice, so a
// caller may append, cut or combine operations before running it.
type Tx []TxOp

// Put adds a put; onFail is the error its failed condition means.
func (t *Tx) Put(p *types.Put, onFail error) *Tx {
	return t.add(types.TransactWriteItem{Put: p}, onFail)
}

// Update adds an update; onFail is the error its failed condition means.
func (t *Tx) Update(u *types.Update, onFail error) *Tx {
	return t.add(types.TransactWriteItem{Update: u}, onFail)
}

// Delete adds a delete; onFail is the error its failed condition means.
func (t *Tx) Delete(d *types.Delete, onFail error) *Tx {
	return t.add(types.TransactWriteItem{Delete: d}, onFail)
}

// Check adds a condition check; onFail is the error its failure means.
func (t *Tx) Check(c *types.ConditionCheck, onFail error) *Tx {
	return t.add(types.TransactWriteItem{ConditionCheck: c}, onFail)
}

func (t *Tx) add(item types.TransactWriteItem, onFail error) *Tx {
	*t = append(*t, TxOp{Item: item, OnFail: onFail})
	return t
}

// Input is the TransactWriteItemsInput of t.
func (t Tx) Input() *dynamodb.TransactWriteItemsInput {
	items := make([]types.TransactWriteItem, len(t))
	for i, op := range t {
		items[i] = op.Item
	}
	return &dynamodb.TransactWriteItemsInput{TransactItems: items}
}

// Run writes t in one TransactWriteItems; its error is read by Err.
func (t Tx) Run(ctx context.Context, client TxAPI) error {
	_, err := client.TransactWriteItems(ctx, t.Input())
	return t.Err(err)
}

// Err reads the error of a TransactWriteItems of t: when it was cancelled
// because conditions failed, a *ConditionError meaning the OnFail of the
// first refused operation that has one, with the item its condition saw
// (when it asked for ALL_OLD); otherwise the error Wrapped, which
// classifies the remaining reasons (ErrConditionFailed, ErrItemTooLarge,
// ErrConflict).
func (t Tx) Err(err error) error {
	const op = "TransactWriteItems"
	var tc *types.TransactionCanceledException
	if err == nil || !errors.As(err, &tc) {
		return Wrap(op, err)
	}
	first := -1
	var failed []int
	for i, r := range tc.CancellationReasons {
		if aws.ToString(r.Code) != "ConditionalCheckFailed" {
			continue
		}
		failed = append(failed, i)
		if first < 0 || t.meant(i) && !t.meant(first) {
			first = i
		}
	}
	if first < 0 {
		return Wrap(op, err)
	}
	var onFail error
	if t.meant(first) {
		onFail = t[first].OnFail
	}
	item := tc.CancellationReasons[first].Item
	return &ConditionError{Err: meaning(onFail, item), Item: item, Index: first, Failed: failed, cause: Wrap(op, err)}
}

// meant reports whether operation i has a failure meaning.
func (t Tx) meant(i int) bool { return i < len(t) && t[i].OnFail != nil }
