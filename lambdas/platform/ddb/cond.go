package ddb

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ConditionError is a write refused by its condition, carrying what the
// caller said that means (Err) and the item the condition was evaluated
// against. errors.Is matches both Err and ErrConditionFailed, so a caller
// tests for its own meaning and the SDK error stays in the chain.
type ConditionError struct {
	// Err is the caller's meaning; nil when it gave none.
	Err error
	// Item is the item the condition saw, returned when the write asked
	// for ReturnValuesOnConditionCheckFailure=ALL_OLD; nil when there was
	// no item or it was not asked for.
	Item map[string]types.AttributeValue
	// Index is the position of the refused operation in its transaction,
	// 0 for a single write.
	Index int
	// Failed are the positions of every operation of the transaction
	// whose condition failed, in order ([0] for a single write), for a
	// caller that drops the refused operations and tries the rest again.
	Failed []int
	cause  error // the classified SDK error
}

func (e *ConditionError) Error() string {
	if e.Err == nil {
		return e.cause.Error()
	}
	return e.Err.Error()
}

func (e *ConditionError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.cause}
	}
	return []error{e.Err, e.cause}
}

// MissingOr is a failure meaning decided by the item the condition saw:
// missing when there was none, present otherwise. It tells "not found"
// from "changed meanwhile" in one conditional write, without a read first;
// the write must ask for ReturnValuesOnConditionCheckFailure=ALL_OLD.
func MissingOr(missing, present error) error { return &missingOr{missing, present} }

type missingOr struct{ missing, present error }

func (m *missingOr) Error() string {
	return fmt.Sprintf("%v, or %v", m.missing, m.present)
}

// meaning resolves onFail, the error a caller attached to a write, against
// the item its condition saw.
func meaning(onFail error, item map[string]types.AttributeValue) error {
	var m *missingOr
	if !errors.As(onFail, &m) {
		return onFail
	}
	if len(item) == 0 {
		return m.missing
	}
	return m.present
}

// WrapCond is Wrap for a single conditional write (PutItem, UpdateItem,
// DeleteItem): a failed condition becomes a *ConditionError meaning
// onFail, with the old item when the write returned it.
func WrapCond(op string, err error, onFail error) error {
	err = Wrap(op, err)
	var ccf *types.ConditionalCheckFailedException
	if err == nil || !errors.As(err, &ccf) {
		return err
	}
	return &ConditionError{Err: meaning(onFail, ccf.Item), Item: ccf.Item, Failed: []int{0}, cause: err}
}

// IfConditionFailed hands a failed condition's old item, unmarshalled
// into T (nil when the condition saw no item), to decide, which returns
// the caller's error for it. Any other err is returned as it is. It is for
// meanings that need more of the item than MissingOr.
func IfConditionFailed[T any](err error, decide func(old *T) error) error {
	if !IsConditionFailed(err) {
		return err
	}
	var old T
	found, uerr := OldItem(err, &old)
	switch {
	case uerr != nil:
		return uerr
	case !found:
		return decide(nil)
	}
	return decide(&old)
}

// OldItem unmarshals the item that a failed condition was evaluated against,
// as returned with ReturnValuesOnConditionCheckFailure=ALL_OLD, from a
// single write's error or a cancelled transaction's ConditionError. It
// reports false when the error carries no item, i.e. the item did not
// exist. This lets a single conditional write tell "missing" from "wrong
// state" without a read before the write.
func OldItem(err error, out any) (bool, error) {
	item, _ := FailedItem(err)
	if len(item) == 0 {
		return false, nil
	}
	if uerr := attributevalue.UnmarshalMap(item, out); uerr != nil {
		return false, fmt.Errorf("ddb: unmarshal item of failed condition: %w", uerr)
	}
	return true, nil
}

// FailedItem reports whether err is a failed condition, of a single write
// or of a transaction's operation, and returns the item the condition saw
// as stored (nil when there was none or it was not asked for), for
// callers that judge it by attributes before unmarshalling.
func FailedItem(err error) (map[string]types.AttributeValue, bool) {
	var (
		ce  *ConditionError
		ccf *types.ConditionalCheckFailedException
	)
	switch {
	case errors.As(err, &ce):
		return ce.Item, true
	case errors.As(err, &ccf):
		return ccf.Item, true
	}
	return nil, false
}

// OwnWrite is IfConditionFailed for a write that puts a random token in
// its item: when the item the failed condition found holds the token
// (tokenOf reads it), the write is this request's own earlier attempt,
// applied by DynamoDB with its answer lost and sent again by the SDK, and
// that item is the write's result. Any other failed condition goes to
// decide. A nil error and a nil item mean err was nil.
func OwnWrite[T any](err error, tokenOf func(*T) string, token string, decide func(old *T) error) (*T, error) {
	var mine *T
	err = IfConditionFailed(err, func(old *T) error {
		if old != nil && tokenOf(old) == token {
			mine = old
			return nil
		}
		return decide(old)
	})
	return mine, err
}
