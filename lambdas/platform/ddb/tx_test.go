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
			if tt.wantNoErr != (err == nil) {
				t.Fatalf("error %v", err)
			}
			checkIs(t, err, tt.want, tt.notWant)
			var ce *ddb.ConditionError
			if ok := errors.As(err, &ce); ok != (tt.index >= 0) {
				t.Fatalf("ConditionError %v, want index %d", ok, tt.index)
			}
			if ce == nil {
				return
			}
			if ce.Index != tt.index || fmt.Sprint(ce.Failed) != tt.failed || (ce.Item != nil) != tt.wantItem {
				t.Errorf("index %d failed %v item %v, want %d %s %v", ce.Index, ce.Failed, ce.Item, tt.index, tt.failed, tt.wantItem)
			}
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
	var old row
	if found, uerr := ddb.OldItem(err, &old); !errors.Is(err, errTaken) || !found || uerr != nil || old.SK != "001" {
		t.Fatalf("error %v, old item %+v (%v %v): want errTaken with item 001", err, old, found, uerr)
	}
	tx[0].Item.ConditionCheck.Key = k("009")
	if err := tx.Run(context.Background(), client); !errors.Is(err, errGone) || errors.Is(err, errTaken) {
		t.Fatalf("error %v, want errGone", err)
	}
	if err := tx[1:2].Run(context.Background(), client); !errors.Is(err, errTaken) {
		t.Fatalf("error %v, want errTaken", err)
	}
	if _, err := client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: k("001")}); err != nil {
		t.Fatal(err)
	}
	if err := tx[1:2].Run(context.Background(), client); err != nil {
		t.Fatal(err)
	}
}
