package ddb_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type item struct {
	ID    string   `dynamodbav:"ticket_id"`
	Body  string   `dynamodbav:"body,omitempty"`
	N     int      `dynamodbav:"n"`
	Tags  []string `dynamodbav:"tags,stringset,omitempty"`
	Flag  bool     `dynamodbav:"flag"`
	Notes []string `dynamodbav:"notes"`
}

func TestItemSize(t *testing.T) {
	av, err := attributevalue.MarshalMap(item{ID: "abc", Body: "hello", N: 12345, Flag: true, Notes: []string{"x", "yz"}})
	if err != nil {
		t.Fatal(err)
	}
	// ticket_id(9)+3, body(4)+5, n(1)+ (5 digits → 3+1=4), flag(4)+1,
	// notes(5)+ 3 + (1+1) + (1+2)
	want := 12 + 9 + 5 + 5 + 5 + 3 + 2 + 3
	if got := ddb.ItemSize(av); got != want {
		t.Errorf("ItemSize = %d, want %d", got, want)
	}
}

// The 400 KB limit, against DynamoDB Local: ItemSize agrees with the
// server about what fits, and the server's refusal is ErrItemTooLarge.
func TestItemTooLarge(t *testing.T) {
	table := scratchTable(t)
	client := testenv.Client(t)
	ctx := context.Background()
	put := func(it item) error {
		av, err := attributevalue.MarshalMap(it)
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: av})
		return ddb.Wrap("PutItem", err)
	}
	fits := item{ID: "fits", Body: strings.Repeat("x", ddb.MaxItemBytes-100)}
	av, _ := attributevalue.MarshalMap(fits)
	if ddb.ItemSize(av) > ddb.MaxItemBytes {
		t.Fatalf("ItemSize %d", ddb.ItemSize(av))
	}
	if err := put(fits); err != nil {
		t.Fatalf("item of %d bytes: %v", ddb.ItemSize(av), err)
	}
	err := put(item{ID: "big", Body: strings.Repeat("x", ddb.MaxItemBytes+1)})
	if !ddb.IsItemTooLarge(err) || ddb.IsConditionFailed(err) {
		t.Fatalf("PutItem over the limit: %v", err)
	}
	var apiErr interface{ ErrorCode() string }
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ValidationException" {
		t.Errorf("SDK error not in chain: %v", err)
	}

	// UpdateItem growing an item past the limit.
	upd, _ := expression.NewBuilder().WithUpdate(expression.Set(expression.Name("more"), expression.Value(strings.Repeat("y", 1000)))).Build()
	key, _ := attributevalue.MarshalMap(struct {
		ID string `dynamodbav:"ticket_id"`
	}{"fits"})
	_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key,
		UpdateExpression: upd.Update(), ExpressionAttributeNames: upd.Names(), ExpressionAttributeValues: upd.Values()})
	if err = ddb.Wrap("UpdateItem", err); !ddb.IsItemTooLarge(err) {
		t.Errorf("UpdateItem over the limit: %v", err)
	}
}

func TestConditionFailedAndOldItem(t *testing.T) {
	table := scratchTable(t)
	client := testenv.Client(t)
	ctx := context.Background()
	av, _ := attributevalue.MarshalMap(item{ID: "a", Body: "old", N: 1})
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: av}); err != nil {
		t.Fatal(err)
	}
	cond, _ := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("ticket_id"))).Build()
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: av,
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	err = ddb.Wrap("PutItem", err)
	if !ddb.IsConditionFailed(err) || ddb.IsNotFound(err) {
		t.Fatalf("err = %v", err)
	}
	var old item
	if found, uerr := ddb.OldItem(err, &old); !found || uerr != nil || old.Body != "old" {
		t.Errorf("OldItem = %v %v %+v", found, uerr, old)
	}
	if found, _ := ddb.OldItem(errors.New("other"), &old); found {
		t.Error("OldItem found an item in an unrelated error")
	}

	_, err = client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("no-such-table" + testenv.Suffix()), Key: av})
	if err = ddb.Wrap("GetItem", err); !errors.Is(err, ddb.ErrTableNotFound) {
		t.Errorf("missing table: %v", err)
	}
	if ddb.Wrap("GetItem", nil) != nil {
		t.Error("Wrap(nil) != nil")
	}
}

func TestNewClientFromEnv(t *testing.T) {
	env := map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": testenv.Endpoint(t), "AWS_ENDPOINT_URL": "http://127.0.0.1:1"}
	c, err := ddb.NewClient(context.Background(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Options().Region != awsconf.DefaultRegion || *c.Options().BaseEndpoint != env["AWS_ENDPOINT_URL_DYNAMODB"] || !c.Options().DisableValidateResponseChecksum {
		t.Errorf("options: region %q endpoint %v checksum off %v", c.Options().Region, c.Options().BaseEndpoint, c.Options().DisableValidateResponseChecksum)
	}
	if _, err := c.ListTables(context.Background(), &dynamodb.ListTablesInput{}); err != nil {
		t.Errorf("dummy credentials rejected: %v", err)
	}
	// The SDK's convention: without the service's own variable, the
	// endpoint of every service applies.
	delete(env, "AWS_ENDPOINT_URL_DYNAMODB")
	if c, err = ddb.NewClient(context.Background(), func(k string) string { return env[k] }); err != nil || *c.Options().BaseEndpoint != env["AWS_ENDPOINT_URL"] {
		t.Errorf("AWS_ENDPOINT_URL alone: %v, %v", err, c.Options().BaseEndpoint)
	}
}

func TestClientOptionsApplyLast(t *testing.T) {
	env := map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1"}
	c, err := ddb.NewClient(context.Background(), func(k string) string { return env[k] }, func(o *dynamodb.Options) {
		o.AppID = "recorded"
		o.DisableValidateResponseChecksum = false
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Options().AppID != "recorded" || c.Options().DisableValidateResponseChecksum {
		t.Errorf("option not applied last: app id %q, checksum off %v", c.Options().AppID, c.Options().DisableValidateResponseChecksum)
	}
	if c, err = ddb.NewClient(context.Background(), func(k string) string { return env[k] }); err != nil || c.Options().AppID != "" {
		t.Errorf("an option leaked into the next client: %v, app id %q", err, c.Options().AppID)
	}
}

func TestClassifyCancellation(t *testing.T) {
	reason := func(code, msg string) types.CancellationReason {
		return types.CancellationReason{Code: aws.String(code), Message: aws.String(msg)}
	}
	tests := []struct {
		name    string
		reasons []types.CancellationReason
		want    error
	}{
		{"condition", []types.CancellationReason{reason("None", ""), reason("ConditionalCheckFailed", "")}, ddb.ErrConditionFailed},
		{"size", []types.CancellationReason{reason("ValidationError", "Item size has exceeded the maximum allowed size")}, ddb.ErrItemTooLarge},
		{"conflict", []types.CancellationReason{reason("TransactionConflict", "")}, ddb.ErrConflict},
		{"other validation is not a conflict", []types.CancellationReason{reason("ValidationError", "One or more parameter values were invalid")}, nil},
		{"throttling is not a conflict", []types.CancellationReason{reason("ThrottlingError", "")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ddb.Wrap("TransactWriteItems", &types.TransactionCanceledException{CancellationReasons: tt.reasons})
			for _, sentinel := range []error{ddb.ErrConditionFailed, ddb.ErrItemTooLarge, ddb.ErrConflict} {
				if got := errors.Is(err, sentinel); got != (sentinel == tt.want) {
					t.Errorf("errors.Is(%v, %v) = %v", err, sentinel, got)
				}
			}
		})
	}
}

// scratchTable is a fresh copy of the ITSM tickets table (a one-key table
// of the dev golden template) for tests of the client's own behaviour.
func scratchTable(t *testing.T) string {
	t.Helper()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "itsm"))
	for _, n := range names {
		return n
	}
	t.Fatal("the itsm template has no table")
	return ""
}
