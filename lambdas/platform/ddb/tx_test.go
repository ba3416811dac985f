package ddb_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	errGone    = errors.New("gone")
	errStale   = errors.New("stale")
	errTaken   = errors.New("taken")
	oldItem    = map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}}
	noReason   = types.CancellationReason{Code: aws.String("None")}
	failedCond = types.CancellationReason{Code: aws.String("ConditionalCheckFailed")}
	failedOld  = types.CancellationReason{Code: aws.String("ConditionalCheckFailed"), Item: oldItem}
)

func cancelledWith(reasons ...types.CancellationReason) error {
	return &types.TransactionCanceledException{CancellationReasons: reasons}
}

func TestTxErr(t *testing.T) {
	var tx ddb.Tx
	tx.Check(&types.ConditionCheck{}, nil).
		Put(&types.Put{}, errTaken).
		Update(&types.Update{}, ddb.MissingOr(errGone, errStale)).
		Delete(&types.Delete{}, nil)
	tests := []struct {
		name      string
		err       error
		want      []error // errors.Is holds for each
		notWant   []error
		index     int // of the ConditionError, -1 when none
		failed    string
		wantItem  bool
		wantNoErr bool
	}{
		{name: "nil", err: nil, wantNoErr: true, index: -1},
		{name: "the meaning of the refused operation", err: cancelledWith(noReason, failedOld, noReason, noReason),
			want: []error{errTaken, ddb.ErrConditionFailed}, index: 1, failed: "[1]", wantItem: true},
		{name: "missing: no item", err: cancelledWith(noReason, noReason, failedCond, noReason),
			want: []error{errGone}, notWant: []error{errStale}, index: 2, failed: "[2]"},
		{name: "present: the item", err: cancelledWith(noReason, noReason, failedOld, noReason),
			want: []error{errStale}, notWant: []error{errGone}, index: 2, failed: "[2]", wantItem: true},
		{name: "an operation with a meaning wins over an earlier one without", err: cancelledWith(failedCond, noReason, failedOld, noReason),
			want: []error{errStale}, index: 2, failed: "[0 2]", wantItem: true},
		{name: "the first of two with a meaning", err: cancelledWith(noReason, failedCond, failedCond, noReason),
			want: []error{errTaken}, notWant: []error{errGone}, index: 1, failed: "[1 2]"},
		{name: "no meaning: only ErrConditionFailed", err: cancelledWith(noReason, noReason, noReason, failedCond),
			want: []error{ddb.ErrConditionFailed}, notWant: []error{errTaken, errGone, errStale}, index: 3, failed: "[3]"},
		{name: "a conflict is classified", err: cancelledWith(noReason, types.CancellationReason{Code: aws.String("TransactionConflict")}),
			want: []error{ddb.ErrConflict}, notWant: []error{ddb.ErrConditionFailed}, index: -1},
		{name: "an oversized item is classified", err: cancelledWith(types.CancellationReason{Code: aws.String("ValidationError"), Message: aws.String("Item size has exceeded the maximum allowed size")}),
			want: []error{ddb.ErrItemTooLarge}, index: -1},
		{name: "not a cancellation", err: &types.ResourceNotFoundException{}, want: []error{ddb.ErrTableNotFound}, index: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tx.Err(tt.err)
			if tt.wantNoErr {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			assertIs(t, err, tt.want, tt.notWant)
			var ce *ddb.ConditionError
			require.Equal(t, tt.index >= 0, errors.As(err, &ce), "a ConditionError (want index %d)", tt.index)
			if ce == nil {
				return
			}
			assert.Equal(t, tt.index, ce.Index, "index")
			assert.Equal(t, tt.failed, fmt.Sprint(ce.Failed), "failed")
			assert.Equal(t, tt.wantItem, ce.Item != nil, "item %v", ce.Item)
		})
	}
}

// Against DynamoDB Local: the reasons arrive by position and the old item
// with them.
func TestTxRun(t *testing.T) {
	client, table := pagerTable(t, 2, nil)
	k := func(sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "p"}, "sk": &types.AttributeValueMemberS{Value: sk}}
	}
	var tx ddb.Tx
	tx.Check(&types.ConditionCheck{TableName: aws.String(table), Key: k("000"), ConditionExpression: aws.String("attribute_exists(pk)")}, errGone).
		Put(&types.Put{TableName: aws.String(table), Item: k("001"), ConditionExpression: aws.String("attribute_not_exists(pk)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}, errTaken)
	err := tx.Run(context.Background(), client)
	require.ErrorIs(t, err, errTaken)
	var old row
	found, uerr := ddb.OldItem(err, &old)
	require.NoError(t, uerr, "old item")
	require.True(t, found, "old item found")
	require.Equal(t, "001", old.SK, "old item")
	tx[0].Item.ConditionCheck.Key = k("009")
	err = tx.Run(context.Background(), client)
	require.ErrorIs(t, err, errGone)
	require.NotErrorIs(t, err, errTaken)
	require.ErrorIs(t, tx[1:2].Run(context.Background(), client), errTaken)
	_, err = client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: k("001")})
	require.NoError(t, err)
	require.NoError(t, tx[1:2].Run(context.Background(), client))
}
