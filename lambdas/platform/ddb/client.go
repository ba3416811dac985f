// Package ddb is the DynamoDB plumbing every service shares: a client
// configured from the environment, sentinel errors with predicates in place
// of SDK exception types, and the item-size arithmetic behind the 400 KB
// item limit.
package ddb

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
)

// An Option adjusts the client NewClient makes, after its environment has.
// Lambda functions pass none; the dev tools pass the recorder of the
// permissions a function's requests need (devtools/ddbrecord), so that
// instrumentation is an argument a caller can see, never a global.
type Option = func(*dynamodb.Options)

// NewClient returns a DynamoDB client configured from getenv (os.Getenv in
// production; a map lookup in tests and in the local runner, which is why it
// is a parameter) through awsconf, the loader every AWS client shares: the
// region from AWS_REGION, the endpoint from the SDK's
// AWS_ENDPOINT_URL_DYNAMODB (else AWS_ENDPOINT_URL), and, with an endpoint
// set and no access key, static dummy credentials, as DynamoDB Local needs
// a signature but checks nothing. opts apply last.
func NewClient(ctx context.Context, getenv func(string) string, opts ...Option) (*dynamodb.Client, error) {
	cfg, err := awsconf.Load(ctx, getenv, dynamodb.ServiceID)
	if err != nil {
		return nil, err
	}
	endpoint := awsconf.BaseEndpoint(getenv, dynamodb.ServiceID)
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != nil {
			o.BaseEndpoint = endpoint
			// DynamoDB Local sends X-Amz-Crc32 values that do not match
			// some error bodies, and the SDK logs a warning for each.
			o.DisableValidateResponseChecksum = true
		}
	}, func(o *dynamodb.Options) {
		for _, opt := range opts {
			opt(o)
		}
	}), nil
}
