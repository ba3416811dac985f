package ddb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// Sentinel errors. Test with errors.Is or the Is* predicates; the SDK error
// stays in the chain for errors.As.
var (
	// ErrNotFound: the item does not exist.
	ErrNotFound = errors.New("ddb: item not found")
	// ErrConditionFailed: a ConditionExpression evaluated to false.
	ErrConditionFailed = errors.New("ddb: condition failed")
	// ErrItemTooLarge: the item would exceed DynamoDB's 400 KB item limit.
	ErrItemTooLarge = errors.New("ddb: item too large")
	// ErrTableNotFound: the table (or index) does not exist.
	ErrTableNotFound = errors.New("ddb: table not found")
	// ErrConflict: a transaction conflicted with another request.
	ErrConflict = errors.New("ddb: transaction conflict")
	// ErrStartKey: DynamoDB refused a Query's or Scan's ExclusiveStartKey
	// (outside the key condition, or not a key of the table or index). A
	// start key comes from a client's cursor, so it is ErrInvalidCursor
	// too, which every service answers with 400. Services check cursors
	// against their key range first; this is the net under those checks.
	ErrStartKey = fmt.Errorf("ddb: exclusive start key refused: %w", ErrInvalidCursor)
)

// IsNotFound reports whether err is ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsConditionFailed reports whether err is ErrConditionFailed.
func IsConditionFailed(err error) bool { return errors.Is(err, ErrConditionFailed) }

// IsItemTooLarge reports whether err is ErrItemTooLarge.
func IsItemTooLarge(err error) bool { return errors.Is(err, ErrItemTooLarge) }

// Error is an operation error classified under one of the sentinels.
type Error struct {
	Op   string // API operation, e.g. "UpdateItem"
	Kind error  // one of the sentinels, or nil when unclassified
	Err  error  // the SDK error
}

func (e *Error) Error() string {
	if e.Kind == nil {
		return fmt.Sprintf("ddb: %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("%v (%s): %v", e.Kind, e.Op, e.Err)
}

// Is matches the sentinel this error was classified as, and what that
// sentinel wraps (ErrStartKey is ErrInvalidCursor).
func (e *Error) Is(target error) bool { return e.Kind != nil && errors.Is(e.Kind, target) }

func (e *Error) Unwrap() error { return e.Err }

// Wrap classifies an SDK error of operation op. nil stays nil, and so does
// an error Wrapped already, so a store may Wrap what a helper returned.
func Wrap(op string, err error) error {
	var done *Error
	if err == nil || errors.As(err, &done) {
		return err
	}
	return &Error{Op: op, Kind: classify(err), Err: err}
}

// WrapAs is Wrap that also makes an error classified as kind the caller's
// own error as, ahead of it in the chain: a store answers in its domain's
// errors while ddb's stay testable with errors.Is.
func WrapAs(op string, err error, kind, as error) error {
	err = Wrap(op, err)
	if err != nil && errors.Is(err, kind) {
		return fmt.Errorf("%w: %w", as, err)
	}
	return err
}

func classify(err error) error {
	var (
		ccf   *types.ConditionalCheckFailedException
		rnf   *types.ResourceNotFoundException
		tc    *types.TransactionCanceledException
		tconf *types.TransactionConflictException
		api   smithy.APIError
	)
	switch {
	case errors.As(err, &ccf):
		return ErrConditionFailed
	case errors.As(err, &rnf):
		return ErrTableNotFound
	case errors.As(err, &tconf):
		return ErrConflict
	case errors.As(err, &tc):
		return classifyCancellation(tc.CancellationReasons)
	case errors.As(err, &api) && api.ErrorCode() == "ValidationException" && IsSizeMessage(api.ErrorMessage()):
		return ErrItemTooLarge
	case errors.As(err, &api) && api.ErrorCode() == "ValidationException" && IsStartKeyMessage(api.ErrorMessage()):
		return ErrStartKey
	case IsUnavailable(err):
		return ErrUnavailable
	}
	return nil
}

// IsStartKeyMessage recognises the ValidationExceptions DynamoDB gives for
// an ExclusiveStartKey it cannot start from: "The provided starting key is
// outside query boundaries based on provided conditions", "The provided
// starting key is invalid: …" and "Exclusive Start Key must have same size
// as table's key schema".
func IsStartKeyMessage(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "starting key") || strings.Contains(msg, "exclusive start key")
}

// classifyCancellation classifies a cancelled transaction by its reasons, in
// order of what the caller can act on: a failed condition (404/409), an
// oversized item (413), a conflict with another transaction (retry).
// Anything else stays unclassified, i.e. a server error, rather than being
// passed off as a conflict.
func classifyCancellation(reasons []types.CancellationReason) error {
	has := func(match func(code, msg string) bool) bool {
		for _, r := range reasons {
			code, msg := "", ""
			if r.Code != nil {
				code = *r.Code
			}
			if r.Message != nil {
				msg = *r.Message
			}
			if match(code, msg) {
				return true
			}
		}
		return false
	}
	switch {
	case has(func(code, _ string) bool { return code == "ConditionalCheckFailed" }):
		return ErrConditionFailed
	case has(func(code, msg string) bool { return code == "ValidationError" && IsSizeMessage(msg) }):
		return ErrItemTooLarge
	case has(func(code, _ string) bool { return code == "TransactionConflict" }):
		return ErrConflict
	}
	return nil
}

// IsSizeMessage recognises the item-size ValidationException. DynamoDB has
// no error code for it, only messages such as "Item size has exceeded the
// maximum allowed size" (PutItem) and "Item size to update has exceeded the
// maximum allowed size" (UpdateItem).
func IsSizeMessage(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "item size") && strings.Contains(msg, "exceeded")
}
