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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	// ticket_id(9)+3, body(4)+5, n(1)+ (5 digits → 3+1=4), flag(4)+1,
	// notes(5)+ 3 + (1+1) + (1+2)
	want := 12 + 9 + 5 + 5 + 5 + 3 + 2 + 3
	assert.Equal(t, want, ddb.ItemSize(av), "ItemSize")
}

// The 400 KB limit, against DynamoDB Local: ItemSize agrees with the
// server about what fits, and the server's refusal is ErrItemTooLarge.
func TestItemTooLarge(t *testing.T) {
	table := scratchTable(t)
	client := testenv.Client(t)
	ctx := context.Background()
	put := func(it item) error {
		av, err := attributevalue.MarshalMap(it)
		require.NoError(t, err)
		_, err = client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: av})
		return ddb.Wrap("PutItem", err)
	}
	fits := item{ID: "fits", Body: strings.Repeat("x", ddb.MaxItemBytes-100)}
	av, _ := attributevalue.MarshalMap(fits)
	require.LessOrEqual(t, ddb.ItemSize(av), ddb.MaxItemBytes, "ItemSize")
	require.NoError(t, put(fits), "item of %d bytes", ddb.ItemSize(av))
	err := put(item{ID: "big", Body: strings.Repeat("x", ddb.MaxItemBytes+1)})
	require.True(t, ddb.IsItemTooLarge(err), "PutItem over the limit: %v, want ErrItemTooLarge", err)
	require.False(t, ddb.IsConditionFailed(err), "PutItem over the limit: %v, a failed condition", err)
	var apiErr interface{ ErrorCode() string }
	if assert.ErrorAs(t, err, &apiErr, "SDK error not in chain") {
		assert.Equal(t, "ValidationException", apiErr.ErrorCode(), "SDK error code")
	}

	// UpdateItem growing an item past the limit.
	upd, _ := expression.NewBuilder().WithUpdate(expression.Set(expression.Name("more"), expression.Value(strings.Repeat("y", 1000)))).Build()
	key, _ := attributevalue.MarshalMap(struct {
		ID string `dynamodbav:"ticket_id"`
	}{"fits"})
	_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key,
		UpdateExpression: upd.Update(), ExpressionAttributeNames: upd.Names(), ExpressionAttributeValues: upd.Values()})
	err = ddb.Wrap("UpdateItem", err)
	assert.True(t, ddb.IsItemTooLarge(err), "UpdateItem over the limit: %v", err)
}

func TestConditionFailedAndOldItem(t *testing.T) {
	table := scratchTable(t)
	client := testenv.Client(t)
	ctx := context.Background()
	av, _ := attributevalue.MarshalMap(item{ID: "a", Body: "old", N: 1})
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: av})
	require.NoError(t, err)
	cond, _ := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("ticket_id"))).Build()
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: av,
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	err = ddb.Wrap("PutItem", err)
	require.True(t, ddb.IsConditionFailed(err), "err = %v, want a failed condition", err)
	require.False(t, ddb.IsNotFound(err), "err = %v, not found", err)
	var old item
	found, uerr := ddb.OldItem(err, &old)
	assert.True(t, found, "OldItem found")
	assert.NoError(t, uerr, "OldItem")
	assert.Equal(t, "old", old.Body, "OldItem")
	found, _ = ddb.OldItem(errors.New("other"), &old)
	assert.False(t, found, "OldItem found an item in an unrelated error")

	_, err = client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("no-such-table" + testenv.Suffix()), Key: av})
	assert.ErrorIs(t, ddb.Wrap("GetItem", err), ddb.ErrTableNotFound, "missing table")
	assert.NoError(t, ddb.Wrap("GetItem", nil), "Wrap(nil)")
}

func TestNewClientFromEnv(t *testing.T) {
	env := map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": testenv.Endpoint(t), "AWS_ENDPOINT_URL": "http://127.0.0.1:1"}
	c, err := ddb.NewClient(context.Background(), func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, awsconf.DefaultRegion, c.Options().Region, "options: region")
	if assert.NotNil(t, c.Options().BaseEndpoint, "options: endpoint") {
		assert.Equal(t, env["AWS_ENDPOINT_URL_DYNAMODB"], *c.Options().BaseEndpoint, "options: endpoint")
	}
	assert.True(t, c.Options().DisableValidateResponseChecksum, "options: checksum off")
	_, err = c.ListTables(context.Background(), &dynamodb.ListTablesInput{})
	assert.NoError(t, err, "dummy credentials rejected")
	// The SDK's convention: without the service's own variable, the
	// endpoint of every service applies.
	delete(env, "AWS_ENDPOINT_URL_DYNAMODB")
	c, err = ddb.NewClient(context.Background(), func(k string) string { return env[k] })
	if assert.NoError(t, err, "AWS_ENDPOINT_URL alone") && assert.NotNil(t, c.Options().BaseEndpoint, "AWS_ENDPOINT_URL alone") {
		assert.Equal(t, env["AWS_ENDPOINT_URL"], *c.Options().BaseEndpoint, "AWS_ENDPOINT_URL alone")
	}
}

func TestClientOptionsApplyLast(t *testing.T) {
	env := map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1"}
	c, err := ddb.NewClient(context.Background(), func(k string) string { return env[k] }, func(o *dynamodb.Options) {
		o.AppID = "recorded"
		o.DisableValidateResponseChecksum = false
	})
	require.NoError(t, err)
	assert.Equal(t, "recorded", c.Options().AppID, "option not applied last: app id")
	assert.False(t, c.Options().DisableValidateResponseChecksum, "option not applied last: checksum off")
	c, err = ddb.NewClient(context.Background(), func(k string) string { return env[k] })
	if assert.NoError(t, err, "the next client") {
		assert.Empty(t, c.Options().AppID, "an option leaked into the next client: app id")
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
				if sentinel == tt.want {
					assert.ErrorIs(t, err, sentinel)
				} else {
					assert.NotErrorIs(t, err, sentinel)
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
	require.FailNow(t, "the itsm template has no table")
	return ""
}
