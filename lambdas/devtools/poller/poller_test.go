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
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynastack/dynastack/lambdas/devtools/poller"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
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
		Client: poller.NewClient(client), StreamARN: arn, Logger: slog.New(slog.DiscardHandler),
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

// TestEventRecord: a Streams API record arrives in the shape Lambda sends,
// every attribute type included, and survives Lambda's JSON.
func TestEventRecord(t *testing.T) {
	img := map[string]st.AttributeValue{
		"s": &st.AttributeValueMemberS{Value: "x"}, "n": &st.AttributeValueMemberN{Value: "1.5"},
		"b": &st.AttributeValueMemberB{Value: []byte{0, 1, 255}}, "t": &st.AttributeValueMemberBOOL{Value: true},
		"z": &st.AttributeValueMemberNULL{Value: true}, "ss": &st.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"ns": &st.AttributeValueMemberNS{Value: []string{"1", "2"}}, "bs": &st.AttributeValueMemberBS{Value: [][]byte{{1}, {2}}},
		"l": &st.AttributeValueMemberL{Value: []st.AttributeValue{&st.AttributeValueMemberN{Value: "2"}, &st.AttributeValueMemberS{Value: "y"}}},
		"m": &st.AttributeValueMemberM{Value: map[string]st.AttributeValue{"k": &st.AttributeValueMemberS{Value: "v"}, "e": &st.AttributeValueMemberM{Value: map[string]st.AttributeValue{}}}},
	}
	when := time.Date(2026, 2, 3, 4, 5, 6, 700_000_000, time.UTC)
	got, err := poller.EventRecord(st.Record{
		AwsRegion: aws.String("eu-west-1"), EventID: aws.String("e1"), EventName: st.OperationTypeRemove,
		EventSource: aws.String("aws:dynamodb"), EventVersion: aws.String("1.1"),
		UserIdentity: &st.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")},
		Dynamodb: &st.StreamRecord{
			Keys: map[string]st.AttributeValue{"pk": &st.AttributeValueMemberS{Value: "p"}}, OldImage: img,
			SequenceNumber: aws.String("100"), StreamViewType: st.StreamViewTypeNewAndOldImages,
			ApproximateCreationDateTime: &when, SizeBytes: aws.Int64(42),
		},
	}, "arn:stream")
	if err != nil {
		t.Fatal(err)
	}
	want := events.DynamoDBEventRecord{
		AWSRegion: "eu-west-1", EventID: "e1", EventName: "REMOVE", EventSource: "aws:dynamodb", EventVersion: "1.1",
		EventSourceArn: "arn:stream",
		UserIdentity:   &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"},
		Change: events.DynamoDBStreamRecord{
			Keys: map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute("p")},
			OldImage: map[string]events.DynamoDBAttributeValue{
				"s": events.NewStringAttribute("x"), "n": events.NewNumberAttribute("1.5"),
				"b": events.NewBinaryAttribute([]byte{0, 1, 255}), "t": events.NewBooleanAttribute(true),
				"z": events.NewNullAttribute(), "ss": events.NewStringSetAttribute([]string{"a", "b"}),
				"ns": events.NewNumberSetAttribute([]string{"1", "2"}), "bs": events.NewBinarySetAttribute([][]byte{{1}, {2}}),
				"l": events.NewListAttribute([]events.DynamoDBAttributeValue{events.NewNumberAttribute("2"), events.NewStringAttribute("y")}),
				"m": events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{
					"k": events.NewStringAttribute("v"), "e": events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{})}),
			},
			SequenceNumber: "100", StreamViewType: "NEW_AND_OLD_IMAGES", SizeBytes: 42,
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: when.Truncate(time.Second)},
		},
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("EventRecord\n got %s\nwant %s", gb, wb)
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
