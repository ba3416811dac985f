// Package streamsapi reads a DynamoDB stream with the DynamoDB Streams API
// and hands its records over in the shape Lambda's event source mapping
// delivers them: what the operator tool stak-replay and the dev-only
// poller share. Lambda functions get their records from the mapping and
// must not link it (services/deps_test.go).
package streamsapi

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// API is the part of *dynamodbstreams.Client that reading a stream takes:
// the dev poller follows it, stak-replay reads back the batches its
// consumer gave up on.
type API interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// NewClient returns a DynamoDB Streams client with the region, credentials,
// endpoint and HTTP client of c: DynamoDB Local serves both APIs on one
// endpoint, and in AWS a nil endpoint resolves to the streams endpoint.
// optFns change the options after that, as in dynamodbstreams.New.
func NewClient(c *dynamodb.Client, optFns ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	o := c.Options()
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:           o.Region,
		Credentials:      o.Credentials,
		BaseEndpoint:     o.BaseEndpoint,
		HTTPClient:       o.HTTPClient,
		RetryMaxAttempts: o.RetryMaxAttempts,
		RetryMode:        o.RetryMode,
		AppID:            o.AppID,
	}, optFns...)
}
