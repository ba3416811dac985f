package poller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/poller"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// TestPoller checks Lambda's retry rule: a batch with a reported failure
// is redelivered from its earliest failed record, and the images arrive in
// the Lambda event shape, JSON included.
func TestPoller(t *testing.T) {
	ctx := context.Background()
	table, client, arn := stakStream(t)
	var deliveries [][]string
	p, err := poller.New(poller.Config{
		Client: poller.Streams(client), StreamARN: arn, Logger: slog.New(slog.DiscardHandler),
		Handler: func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			var sks []string
			for _, r := range ev.Records {
				b, err := json.Marshal(r)
				require.NoError(t, err)
				var back events.DynamoDBEventRecord
				assert.NoError(t, json.Unmarshal(b, &back), "record does not survive Lambda's JSON: %s", b)
				assert.Equal(t, r.Change.NewImage["sk"].String(), back.Change.NewImage["sk"].String(), "record does not survive Lambda's JSON: %s", b)
				assert.Equal(t, arn, r.EventSourceArn, "record = %s", b)
				assert.Equal(t, "INSERT", r.EventName, "record = %s", b)
				assert.NotEmpty(t, r.Change.SequenceNumber, "record = %s", b)
				sks = append(sks, r.Change.NewImage["sk"].String())
			}
			deliveries = append(deliveries, sks)
			if len(deliveries) == 1 {
				return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{
					{ItemIdentifier: ev.Records[2].Change.SequenceNumber}, {ItemIdentifier: ev.Records[1].Change.SequenceNumber},
				}}, nil
			}
			return events.DynamoDBEventResponse{}, nil
		},
	})
	require.NoError(t, err)
	require.NoError(t, p.Sync(ctx))
	for i := range 4 {
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": s("p"), "sk": s(fmt.Sprint(i))}})
		require.NoError(t, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(deliveries) < 2 && time.Now().Before(deadline) {
		_, err := p.Poll(ctx)
		require.NoError(t, err)
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, [][]string{{"0", "1", "2", "3"}, {"1", "2", "3"}}, deliveries, "deliveries")
}

// stakStream is a fresh Stak inbox table of the dev template, a client and
// the ARN of the table's stream.
func stakStream(t *testing.T) (table string, client *dynamodb.Client, arn string) {
	t.Helper()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "stak"))
	table = names["InboxA8E05DC3"]
	client = testenv.Client(t)
	arn, err := poller.StreamARN(context.Background(), client, table)
	require.NoError(t, err)
	return table, client, arn
}

// TestBisectAndOnFailure follows BisectBatchOnFunctionError: a failing
// invocation is split in halves (not counted as a retry) until the record
// that fails is alone; it then gets its retries, is dropped and described
// to the on-failure destination, and the records after it go on.
func TestBisectAndOnFailure(t *testing.T) {
	ctx := context.Background()
	table, client, arn := stakStream(t)
	var (
		deliveries [][]string
		failures   []poller.Failure
		poison     string
	)
	p, err := poller.New(poller.Config{
		Client: poller.Streams(client), StreamARN: arn, Logger: slog.New(slog.DiscardHandler),
		Bisect: true, MaxRetries: 1,
		OnFailure: func(_ context.Context, f poller.Failure) error { failures = append(failures, f); return nil },
		Handler: func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			var sks []string
			for _, r := range ev.Records {
				sk := r.Change.NewImage["sk"].String()
				sks = append(sks, sk)
				if sk == "2" {
					poison = r.Change.SequenceNumber
				}
			}
			deliveries = append(deliveries, sks)
			for _, sk := range sks {
				if sk == "2" {
					return events.DynamoDBEventResponse{}, fmt.Errorf("record 2 is poison")
				}
			}
			return events.DynamoDBEventResponse{}, nil
		},
	})
	require.NoError(t, err)
	require.NoError(t, p.Sync(ctx))
	for i := range 4 {
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": s("p"), "sk": s(fmt.Sprint(i))}})
		require.NoError(t, err)
	}
	const want = "[[0 1 2 3] [0 1] [2 3] [2] [2] [3]]"
	deadline := time.Now().Add(20 * time.Second)
	for fmt.Sprint(deliveries) != want && len(deliveries) < 8 && time.Now().Before(deadline) {
		_, err := p.Poll(ctx)
		require.NoError(t, err)
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, want, fmt.Sprint(deliveries), "deliveries")
	require.Len(t, failures, 1, "on-failure records")
	f := failures[0]
	assert.Equal(t, poller.RetryAttemptsExhausted, f.Condition, "failure condition")
	assert.Equal(t, 2, f.Attempts, "failure attempts")
	assert.Error(t, f.Err, "failure error")
	assert.Equal(t, 1, f.Batch.BatchSize, "failure batch size")
	assert.Equal(t, poison, f.Batch.StartSequenceNumber, "failure batch start: want record 2")
	assert.Equal(t, poison, f.Batch.EndSequenceNumber, "failure batch end: want record 2")
	assert.Equal(t, arn, f.Batch.StreamARN, "failure stream")
	body, err := f.Record("arn:aws:lambda:us-east-1:000000000000:function:x", time.Now())
	require.NoError(t, err)
	var rec struct {
		RequestContext struct{ Condition string }
		Info           struct {
			ShardID   string `json:"shardId"`
			BatchSize int    `json:"batchSize"`
		} `json:"DDBStreamBatchInfo"`
	}
	require.NoError(t, json.Unmarshal(body, &rec), "destination record = %s", body)
	assert.Equal(t, poller.RetryAttemptsExhausted, rec.RequestContext.Condition, "destination record = %s", body)
	assert.NotEmpty(t, rec.Info.ShardID, "destination record = %s", body)
	assert.Equal(t, 1, rec.Info.BatchSize, "destination record = %s", body)
}

// TestMaxRecordAge: records older than the mapping's maximum age are never
// delivered; their range goes to the on-failure destination.
func TestMaxRecordAge(t *testing.T) {
	ctx := context.Background()
	table, client, arn := stakStream(t)
	var (
		delivered int
		failures  []poller.Failure
		late      bool
	)
	p, err := poller.New(poller.Config{
		Client: poller.Streams(client), StreamARN: arn, Logger: slog.New(slog.DiscardHandler),
		MaxRecordAge: time.Minute,
		Now: func() time.Time {
			if late {
				return time.Now().Add(2 * time.Minute)
			}
			return time.Now()
		},
		OnFailure: func(_ context.Context, f poller.Failure) error { failures = append(failures, f); return nil },
		Handler: func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			delivered += len(ev.Records)
			return events.DynamoDBEventResponse{}, nil
		},
	})
	require.NoError(t, err)
	require.NoError(t, p.Sync(ctx))
	put := func(sk string) {
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": s("p"), "sk": s(sk)}})
		require.NoError(t, err)
	}
	poll := func(until func() bool) {
		deadline := time.Now().Add(20 * time.Second)
		for !until() && time.Now().Before(deadline) {
			_, err := p.Poll(ctx)
			require.NoError(t, err)
			time.Sleep(20 * time.Millisecond)
		}
	}
	put("fresh")
	poll(func() bool { return delivered == 1 })
	late = true // the next records are read two minutes after they were written
	put("old-1")
	put("old-2")
	poll(func() bool { return len(failures) > 0 })
	assert.Equal(t, 1, delivered, "delivered records: want only the fresh one")
	if assert.Len(t, failures, 1, "failures: want one RecordAgeExceeded of 2 records") {
		assert.Equal(t, poller.RecordAgeExceeded, failures[0].Condition, "failure condition")
		assert.Equal(t, 2, failures[0].Batch.BatchSize, "failure batch size")
		assert.Equal(t, 0, failures[0].Attempts, "failure attempts")
	}
}
