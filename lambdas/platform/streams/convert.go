package streams

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// EventRecord converts a record read with the DynamoDB Streams API into
// the shape Lambda delivers it in, so a consumer cannot tell the local
// poller from an event source mapping. arn is the stream's ARN (Lambda's
// eventSourceARN).
func EventRecord(r types.Record, arn string) events.DynamoDBEventRecord {
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
			Keys:           eventImage(c.Keys),
			NewImage:       eventImage(c.NewImage),
			OldImage:       eventImage(c.OldImage),
			SequenceNumber: deref(c.SequenceNumber),
			StreamViewType: string(c.StreamViewType),
		}
		if c.ApproximateCreationDateTime != nil {
			// Lambda sends whole seconds.
			out.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: c.ApproximateCreationDateTime.Truncate(1e9)}
		}
		if c.SizeBytes != nil {
			out.Change.SizeBytes = *c.SizeBytes
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func eventImage(m map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if m == nil {
		return nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		out[k] = eventValue(v)
	}
	return out
}

func eventValue(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute()
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value)
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value)
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = eventValue(e)
		}
		return events.NewListAttribute(l)
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(eventImage(v.Value))
	}
	// An attribute type newer than this SDK: NULL keeps the key visible
	// instead of dropping it silently.
	return events.NewNullAttribute()
}

// Item converts an image of a Lambda stream event into attribute values of
// the DynamoDB API, so consumers can use attributevalue.UnmarshalMap and
// reuse the image's keys in requests.
func Item(img map[string]events.DynamoDBAttributeValue) (map[string]ddbtypes.AttributeValue, error) {
	if img == nil {
		return nil, nil
	}
	out := make(map[string]ddbtypes.AttributeValue, len(img))
	for k, v := range img {
		av, err := itemValue(v)
		if err != nil {
			return nil, fmt.Errorf("streams: attribute %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func itemValue(v events.DynamoDBAttributeValue) (ddbtypes.AttributeValue, error) {
	switch v.DataType() {
	case events.DataTypeString:
		return &ddbtypes.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &ddbtypes.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBinary:
		return &ddbtypes.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeBoolean:
		return &ddbtypes.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &ddbtypes.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeStringSet:
		return &ddbtypes.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &ddbtypes.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &ddbtypes.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		src := v.List()
		l := make([]ddbtypes.AttributeValue, len(src))
		for i, e := range src {
			av, err := itemValue(e)
			if err != nil {
				return nil, err
			}
			l[i] = av
		}
		return &ddbtypes.AttributeValueMemberL{Value: l}, nil
	case events.DataTypeMap:
		m, err := Item(v.Map())
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]ddbtypes.AttributeValue{}
		}
		return &ddbtypes.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unsupported data type %v", v.DataType())
}
