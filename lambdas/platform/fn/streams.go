// Stream functions: what a DynamoDB stream consumer shares with the
// runtime: the handler and consumer types a Lambda event source mapping
// with ReportBatchItemFailures calls, and the conversion of stream images
// to DynamoDB attribute values. The dev-only poller that feeds a stream to
// a consumer outside Lambda is devtools/poller.

package fn

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// StreamHandler is a stream consumer with the signature of a Lambda handler for
// DynamoDB events with ReportBatchItemFailures.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// StreamConsumer is what a stream Lambda function builds once per execution
// environment.
type StreamConsumer interface {
	Handle(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)
}

// StreamConstructor builds a consumer from its function's environment, like a
// service constructor.
type StreamConstructor func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (StreamConsumer, error)
