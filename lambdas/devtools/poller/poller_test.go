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
	"github.com/dynastack/dynastack/lambdas/ops/streamsapi"
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
		Client: streamsapi.NewClient(client), StreamARN: arn, Logger: slog.New(slog.DiscardHandler),
		Handler: func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			var sks []string
			for _, r := range ev.Records {
				b, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				var back events.DynamoDBEventRecord
				if err := json.Unmarshal(b, &back); err != nil || back.Change.NewImage["sk"].String() != r.Change.NewImage["sk"].String() {
					t.Errorf("record does not survive Lambda's JSON: %s (%v)", b, err)
				}
				if r.EventSourceArn != arn || r.EventName != "INSERT" || r.Change.SequenceNumber == "" {
					t.Errorf("record = %s", b)
				}
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
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": s("p"), "sk": s(fmt.Sprint(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(deliveries) < 2 && time.Now().Before(deadline) {
		if _, err := p.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := fmt.Sprint(deliveries); got != "[[0 1 2 3] [1 2 3]]" {
		t.Errorf("deliveries = %s", got)
	}
}

// stakStream is a fresh Stak inbox table of the dev template, a client and
// the ARN of the table's stream.
func stakStream(t *testing.T) (table string, client *dynamodb.Client, arn string) {
	t.Helper()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "stak"))
	table = names["InboxA8E05DC3"]
	client = testenv.Client(t)
	arn, err := poller.StreamARN(context.Background(), client, table)
	if err != nil {
		t.Fatal(err)
	}
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
		Client: streamsapi.NewClient(client), StreamARN: arn, Logger: slog.New(slog.DiscardHandler),
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
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": s("p"), "sk": s(fmt.Sprint(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	const want = "[[0 1 2 3] [0 1] [2 3] [2] [2] [3]]"
	deadline := time.Now().Add(20 * time.Second)
	for fmt.Sprint(deliveries) != want && len(deliveries) < 8 && time.Now().Before(deadline) {
		if _, err := p.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := fmt.Sprint(deliveries); got != want {
		t.Fatalf("deliveries = %s, want %s", got, want)
	}
	if len(failures) != 1 {
		t.Fatalf("on-failure records = %d, want 1: %+v", len(failures), failures)
	}
	f := failures[0]
	if f.Condition != poller.RetryAttemptsExhausted || f.Attempts != 2 || f.Err == nil ||
		f.Batch.BatchSize != 1 || f.Batch.StartSequenceNumber != poison || f.Batch.EndSequenceNumber != poison || f.Batch.StreamARN != arn {
		t.Errorf("failure = %+v, want record 2 (%s) after 2 attempts", f, poison)
	}
	body, err := f.Record("arn:aws:lambda:us-east-1:000000000000:function:x", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		RequestContext struct{ Condition string }
		Info           struct {
			ShardID   string `json:"shardId"`
			BatchSize int    `json:"batchSize"`
		} `json:"DDBStreamBatchInfo"`
	}
	if err := json.Unmarshal(body, &rec); err != nil || rec.RequestContext.Condition != poller.RetryAttemptsExhausted || rec.Info.ShardID == "" || rec.Info.BatchSize != 1 {
		t.Errorf("destination record = %s (%v)", body, err)
	}
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
		Client: streamsapi.NewClient(client), StreamARN: arn, Logger: slog.New(slog.DiscardHandler),
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
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	put := func(sk string) {
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": s("p"), "sk": s(sk)}}); err != nil {
			t.Fatal(err)
		}
	}
	poll := func(until func() bool) {
		deadline := time.Now().Add(20 * time.Second)
		for !until() && time.Now().Before(deadline) {
			if _, err := p.Poll(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	put("fresh")
	poll(func() bool { return delivered == 1 })
	late = true // the next records are read two minutes after they were written
	put("old-1")
	put("old-2")
	poll(func() bool { return len(failures) > 0 })
	if delivered != 1 {
		t.Errorf("delivered %d records, want only the fresh one", delivered)
	}
	if len(failures) != 1 || failures[0].Condition != poller.RecordAgeExceeded || failures[0].Batch.BatchSize != 2 || failures[0].Attempts != 0 {
		t.Errorf("failures = %+v, want one RecordAgeExceeded of 2 records", failures)
	}
}
