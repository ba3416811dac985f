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
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/dynastack/dynastack/lambdas/platform/logx"
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

// Load returns the SDK configuration for getenv's region, with the
// credentials getenv holds (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN: what Lambda gives a function). When some endpoint is
// overridden and no access key is set, it uses static dummy credentials:
// loopback endpoints need a signature but check nothing, and a developer
// machine should not reach for real credentials to talk to them.
//
// It builds the configuration itself instead of the SDK's
// config.LoadDefaultConfig: that chain (shared config files, SSO, IMDS,
// STS web identity) is never used in Lambda, and linking it costs every
// function about 2 ms of init (the package initialisers of sso, ssooidc,
// signin and sts) and 1 MiB of bootstrap (docs/functions.md, "Cold start").
func Load(_ context.Context, getenv func(string) string, overridden ...string) (aws.Config, error) {
	region := getenv(EnvRegion)
	if region == "" {
		region = DefaultRegion
	}
	local := false
	for _, id := range overridden {
		local = local || Endpoint(getenv, id) != ""
	}
	var creds aws.CredentialsProvider
	switch key := getenv("AWS_ACCESS_KEY_ID"); {
	case key != "":
		creds = credentials.NewStaticCredentialsProvider(key, getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN"))
	case local:
		creds = credentials.NewStaticCredentialsProvider("local", "local", "")
	default:
		// Failing the first call, not the start: a function whose
		// clients are never called needs none.
		creds = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, fmt.Errorf("awsconf: no AWS_ACCESS_KEY_ID in the environment: functions take the credentials Lambda puts there (set AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, or an AWS_ENDPOINT_URL_<SERVICE> for a local endpoint)")
		})
	}
	return aws.Config{Region: region, Credentials: aws.NewCredentialsCache(creds),
		APIOptions: []func(*middleware.Stack) error{addTraceHeader}}, nil
}

// addTraceHeader sends the trace header of the call's context
// (logx.TraceHeader: a queue record's, else the invocation's) as
// X-Amzn-Trace-Id, so that SNS passes the caller's trace on to the
// subscribed queue (AWSTraceHeader) and the consumer logs the same trace
// id as the publisher.
//
// The SDK's own RecursionDetection build middleware does this only from
// the process environment: with AWS_LAMBDA_FUNCTION_NAME set it copies
// _X_AMZN_TRACE_ID into the header when the request has none
// (aws/middleware/recursion_detection.go, aws-sdk-go-v2 v1.48). That
// covers a Lambda environment running one invocation at a time, where
// aws-lambda-go sets the variable per invocation; not the local runner,
// which runs every function in one process, nor an environment running
// several invocations at once (aws-lambda-go then leaves the variable
// unset), nor a queue record whose trace is its message's. This one runs
// first, from the context, and sets the same value where both know it;
// the SDK's then finds the header set and leaves it.
func addTraceHeader(s *middleware.Stack) error {
	return s.Build.Add(middleware.BuildMiddlewareFunc("dynastackTraceHeader", func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
		if req, ok := in.Request.(*smithyhttp.Request); ok && req.Header.Get(logx.TraceHeaderName) == "" {
			if h := logx.TraceHeader(ctx); h != "" {
				req.Header.Set(logx.TraceHeaderName, h)
			}
		}
		return next.HandleBuild(ctx, in)
	}), middleware.Before)
}

// For is Load for one service, with that service's endpoint override
// (Endpoint) as the configuration's BaseEndpoint, which a client made from
// it takes: sns.NewFromConfig(cfg) sends to AWS_ENDPOINT_URL_SNS when the
// variable is set, to SNS otherwise.
func For(ctx context.Context, getenv func(string) string, serviceID string) (aws.Config, error) {
	cfg, err := Load(ctx, getenv, serviceID)
	cfg.BaseEndpoint = BaseEndpoint(getenv, serviceID)
	return cfg, err
}

// BaseEndpoint is the value for a client's Options.BaseEndpoint: nil
// unless the service's endpoint is overridden.
func BaseEndpoint(getenv func(string) string, serviceID string) *string {
	if ep := Endpoint(getenv, serviceID); ep != "" {
		return aws.String(ep)
	}
	return nil
}
