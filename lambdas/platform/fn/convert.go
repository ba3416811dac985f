package fn

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// StreamItem converts an image of a Lambda stream event into attribute values of
// the DynamoDB API, so consumers can use attributevalue.UnmarshalMap and
// reuse the image's keys in requests. Both sides speak DynamoDB's JSON wire
// format ({"S":"x"}, binary as base64), which is what Lambda delivered, so
// the conversion is that JSON read back by attributevalue.UnmarshalMapJSON:
// no hand-written case per attribute type to fall behind the SDK.
func StreamItem(img map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	if img == nil {
		return nil, nil
	}
	b, err := json.Marshal(img)
	if err != nil {
		return nil, fmt.Errorf("streams: image: %w", err)
	}
	out, err := attributevalue.UnmarshalMapJSON(b)
	if err != nil {
		return nil, fmt.Errorf("streams: image: %w", err)
	}
	return out, nil
}
