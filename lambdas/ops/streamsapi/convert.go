package streamsapi

import (
	"encoding/json"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// EventRecord converts a record read with the DynamoDB Streams API into
// the shape Lambda delivers it in, so a consumer cannot tell the local
// poller from an event source mapping. arn is the stream's ARN (Lambda's
// eventSourceARN). An image that does not convert is an error: a consumer
// must not see a record Lambda would not have sent.
func EventRecord(r types.Record, arn string) (events.DynamoDBEventRecord, error) {
	out := events.DynamoDBEventRecord{
		AWSRegion:      deref(r.AwsRegion),
		EventID:        deref(r.EventID),
		EventName:      string(r.EventName),
		EventSource:    deref(r.EventSource),
		EventVersion:   deref(r.EventVersion),
		EventSourceArn: arn,
	}
	if id := r.UserIdentity; id != nil {
		out.UserIdentity = &events.DynamoDBUserIdentity{Type: deref(id.Type), PrincipalID: deref(id.PrincipalId)}
	}
	if c := r.Dynamodb; c != nil {
		out.Change = events.DynamoDBStreamRecord{
			SequenceNumber: deref(c.SequenceNumber),
			StreamViewType: string(c.StreamViewType),
		}
		for _, img := range []struct {
			from map[string]types.AttributeValue
			to   *map[string]events.DynamoDBAttributeValue
		}{{c.Keys, &out.Change.Keys}, {c.NewImage, &out.Change.NewImage}, {c.OldImage, &out.Change.OldImage}} {
			if err := eventImage(img.from, img.to); err != nil {
				return out, err
			}
		}
		if c.ApproximateCreationDateTime != nil {
			// Lambda sends whole seconds.
			out.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: c.ApproximateCreationDateTime.Truncate(1e9)}
		}
		if c.SizeBytes != nil {
			out.Change.SizeBytes = *c.SizeBytes
		}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// eventImage converts a Streams API image to the event's through DynamoDB
// JSON, the format Lambda itself sends: attributevalue reads the Streams
// types and writes the JSON, and events reads it back.
func eventImage(m map[string]types.AttributeValue, to *map[string]events.DynamoDBAttributeValue) error {
	if m == nil {
		return nil
	}
	av, err := attributevalue.FromDynamoDBStreamsMap(m)
	if err != nil {
		return err
	}
	b, err := attributevalue.MarshalMapJSON(av)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}
