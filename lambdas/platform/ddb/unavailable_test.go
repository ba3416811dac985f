package ddb_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultyClient is a client made by ddb.NewClient whose DynamoDB is
// DynamoDB Local behind a fault proxy.
func faultyClient(t *testing.T) (*dynamodb.Client, *ddbfault.Proxy) {
	return servicetest.FaultyClient(t, "")
}

// A throttle or a server error that outlasts the client's retries is
// ErrUnavailable after exactly MaxAttempts attempts; a burst of them does
// not leave later requests with fewer attempts (no client-side retry
// quota); fewer faults than attempts are retried away.
func TestUnavailableAfterRetries(t *testing.T) {
	table := scratchTable(t)
	c, p := faultyClient(t)
	get := func() error {
		_, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(table),
			Key: map[string]types.AttributeValue{"ticket_id": &types.AttributeValueMemberS{Value: "x"}}})
		return ddb.Wrap("GetItem", err)
	}
	// 40 requests, 120 retries: the SDK's default quota (500 tokens, 5 per
	// retry) would be empty after 100 of them, and the last requests would
	// get one attempt each.
	for _, burst := range []struct {
		fault ddbfault.Fault
		n     int
	}{{ddbfault.Throttle, 36}, {ddbfault.ServerError, 4}} {
		fault := burst.fault
		p.Set(fault, 1)
		for i := range burst.n {
			before := p.Requests()
			err := get()
			require.ErrorIs(t, err, ddb.ErrUnavailable, "%s, request %d", fault, i)
			require.True(t, ddb.IsUnavailable(err), "%s, request %d: IsUnavailable(%v)", fault, i, err)
			require.Equal(t, ddb.MaxAttempts, p.Requests()-before, "%s, request %d: attempts (a drained retry quota gives 1)", fault, i)
		}
	}
	// Three faults in a row are retried away: the fourth attempt answers.
	p.Set("", 0)
	for i := range 5 {
		p.Next(ddbfault.Throttle, ddb.MaxAttempts-1)
		require.NoError(t, get(), "request %d after %d throttles (the last attempt should answer)", i, ddb.MaxAttempts-1)
	}
	require.NotZero(t, p.Faults(), "the proxy injected nothing")
}

func TestIsUnavailable(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"deadline", context.DeadlineExceeded, true},
		{"canceled by the client", context.Canceled, false},
		{"condition failed", &types.ConditionalCheckFailedException{}, false},
		{"throttled", &types.ProvisionedThroughputExceededException{}, true},
		{"request limit", &types.RequestLimitExceeded{}, true},
		{"server error", &types.InternalServerError{}, true},
		{"transaction throttled", &types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{
			{Code: aws.String("None")}, {Code: aws.String("ThrottlingError")}}}, true},
		{"transaction condition", &types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{
			{Code: aws.String("ConditionalCheckFailed")}}}, false},
	} {
		assert.Equal(t, tt.want, ddb.IsUnavailable(tt.err), "%s: IsUnavailable", tt.name)
	}
}

// Create treats the item its own lost attempt wrote as success, and any
// other item under the key as a taken key.
func TestCreateSurvivesALostAnswer(t *testing.T) {
	table := scratchTable(t)
	c, p := faultyClient(t)
	item := func(desc string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"ticket_id": &types.AttributeValueMemberS{Value: "t1"},
			"issue_description": &types.AttributeValueMemberS{Value: desc}, "comments": &types.AttributeValueMemberL{Value: []types.AttributeValue{}}}
	}
	p.Next(ddbfault.DropAnswer, 1)
	require.NoError(t, ddb.Create(t.Context(), c, table, item("VPN drops"), "ticket_id"), "create with a lost answer")
	require.Equal(t, 2, p.Requests(), "requests: the Put and its retry")
	err := ddb.Create(t.Context(), c, table, item("another"), "ticket_id")
	assert.True(t, ddb.IsConditionFailed(err), "a different item under a taken key: %v, want ErrConditionFailed", err)
}
