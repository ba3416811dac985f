package ddb_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrapCond(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		onFail  error
		want    []error
		notWant []error
	}{
		{"nil stays nil", nil, errTaken, nil, nil},
		{"a failed condition means onFail", &types.ConditionalCheckFailedException{}, errTaken, []error{errTaken, ddb.ErrConditionFailed}, nil},
		{"without a meaning it is ErrConditionFailed", &types.ConditionalCheckFailedException{}, nil, []error{ddb.ErrConditionFailed}, []error{errTaken}},
		{"missing", &types.ConditionalCheckFailedException{}, ddb.MissingOr(errGone, errStale), []error{errGone}, []error{errStale}},
		{"present", &types.ConditionalCheckFailedException{Item: oldItem}, ddb.MissingOr(errGone, errStale), []error{errStale}, []error{errGone}},
		{"other errors are classified", &types.ResourceNotFoundException{}, errTaken, []error{ddb.ErrTableNotFound}, []error{errTaken}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ddb.WrapCond("PutItem", tt.err, tt.onFail)
			if tt.err == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			assertIs(t, err, tt.want, tt.notWant)
		})
	}
}

func TestIfConditionFailed(t *testing.T) {
	type doc struct {
		PK string `dynamodbav:"pk"`
	}
	decide := func(old *doc) error {
		if old == nil {
			return errGone
		}
		return errors.New("state " + old.PK)
	}
	other := errors.New("other")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"not a condition", other, "other"},
		{"no item", ddb.WrapCond("UpdateItem", &types.ConditionalCheckFailedException{}, nil), "gone"},
		{"the item", ddb.Wrap("UpdateItem", &types.ConditionalCheckFailedException{Item: oldItem}), "state a"},
		{"a transaction's item", (ddb.Tx{{}}).Err(cancelledWith(failedOld)), "state a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := ddb.IfConditionFailed(tt.err, decide); err != nil {
				got = err.Error()
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFailedItem(t *testing.T) {
	for _, tt := range []struct {
		name     string
		err      error
		failed   bool
		withItem bool
	}{
		{"nil", nil, false, false},
		{"other", errors.New("x"), false, false},
		{"single write, no item", &types.ConditionalCheckFailedException{}, true, false},
		{"single write, item", ddb.WrapCond("PutItem", &types.ConditionalCheckFailedException{Item: oldItem}, errTaken), true, true},
		{"transaction, item", (ddb.Tx{{}, {}}).Err(cancelledWith(noReason, failedOld)), true, true},
		{"transaction, conflict", (ddb.Tx{{}}).Err(cancelledWith(types.CancellationReason{Code: aws.String("TransactionConflict")})), false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			item, failed := ddb.FailedItem(tt.err)
			assert.Equal(t, tt.failed, failed, "FailedItem: failed")
			assert.Equal(t, tt.withItem, item != nil, "FailedItem: an item (%v)", item)
		})
	}
}

// assertIs checks that err is each of want and none of notWant: which
// sentinels an error answers to is what callers branch on.
func assertIs(t *testing.T, err error, want, notWant []error) {
	t.Helper()
	for _, w := range want {
		assert.ErrorIs(t, err, w)
	}
	for _, w := range notWant {
		assert.NotErrorIs(t, err, w)
	}
}
