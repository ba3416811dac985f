package streamsapi_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynastack/dynastack/lambdas/ops/streamsapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	got, err := streamsapi.EventRecord(st.Record{
		AwsRegion: aws.String("eu-west-1"), EventID: aws.String("e1"), EventName: st.OperationTypeRemove,
		EventSource: aws.String("aws:dynamodb"), EventVersion: aws.String("1.1"),
		UserIdentity: &st.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")},
		Dynamodb: &st.StreamRecord{
			Keys: map[string]st.AttributeValue{"pk": &st.AttributeValueMemberS{Value: "p"}}, OldImage: img,
			SequenceNumber: aws.String("100"), StreamViewType: st.StreamViewTypeNewAndOldImages,
			ApproximateCreationDateTime: &when, SizeBytes: aws.Int64(42),
		},
	}, "arn:stream")
	require.NoError(t, err)
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
	// Lambda's JSON, byte for byte.
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	assert.Equal(t, string(wb), string(gb), "EventRecord")
}
