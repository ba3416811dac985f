// Package awsconf loads the AWS SDK configuration of a function from a
// getenv (os.Getenv in Lambda; the template's environment in the local
// runner and tests), with the SDK's standard endpoint variables read from
// that getenv too, so one process can point each function's clients at
// its own loopback endpoints.
package awsconf

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Environment variables read.
const (
	EnvRegion = "AWS_REGION"
	// EnvEndpoint overrides every service's endpoint (the SDK's name).
	EnvEndpoint = "AWS_ENDPOINT_URL"
	// DefaultRegion is used when AWS_REGION is unset.
	DefaultRegion = "us-east-1"
)

// Endpoint is the endpoint override for a service, by the SDK's
// convention: AWS_ENDPOINT_URL_<SERVICE ID> (upper case, spaces as
// underscores: "SNS", "SQS", "STS", "EventBridge" → EVENTBRIDGE), else
// AWS_ENDPOINT_URL, else "" (the service's real endpoint).
func Endpoint(getenv func(string) string, serviceID string) string {
	if v := getenv(EndpointVar(serviceID)); v != "" {
		return v
	}
	return getenv(EnvEndpoint)
}

// EndpointVar is the variable that overrides serviceID's endpoint alone,
// e.g. AWS_ENDPOINT_URL_DYNAMODB for dynamodb.ServiceID: what the local
// runner and tests set to point a function at their loopback servers.
func EndpointVar(serviceID string) string {
	return EnvEndpoint + "_" + strings.ToUpper(strings.ReplaceAll(serviceID, " ", "_"))
}

// Load returns the SDK configuration for getenv's region. When some
// endpoint is overridden and no access key is set, it uses static dummy
// credentials: loopback endpoints need a signature but check nothing, and
// a developer machine should not reach for real credentials (or hang on
// IMDS) to talk to them.
func Load(ctx context.Context, getenv func(string) string, overridden ...string) (aws.Config, error) {
	region := getenv(EnvRegion)
	if region == "" {
		region = DefaultRegion
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(region)}
	local := false
	for _, id := range overridden {
		local = local || Endpoint(getenv, id) != ""
	}
	if local && getenv("AWS_ACCESS_KEY_ID") == "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("awsconf: load AWS config: %w", err)
	}
	return cfg, nil
}

// BaseEndpoint is the value for a client's Options.BaseEndpoint: nil
// unless the service's endpoint is overridden.
func BaseEndpoint(getenv func(string) string, serviceID string) *string {
	if ep := Endpoint(getenv, serviceID); ep != "" {
		return aws.String(ep)
	}
	return nil
}
