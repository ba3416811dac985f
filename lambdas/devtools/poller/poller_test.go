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
	"github.com/dynastack/dynastack/lambdas/platform/streamsapi"
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
