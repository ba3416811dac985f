package nucleus

import (
	"context"
	"errors"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"

	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/awsrpc"
)

// Service-specific endpoint variables, as the AWS SDKs define them. They
// are read through getenv (platform/awsconf: the local runner passes a
// map, not the process environment) and point the clients at loopback
// servers in `make dev` and tests; unset in AWS.
const (
	EnvEndpointSTS = "AWS_ENDPOINT_URL_STS"
	EnvEndpointEC2 = "AWS_ENDPOINT_URL_EC2"
	EnvEndpointRDS = "AWS_ENDPOINT_URL_RDS"
	EnvEndpointECS = "AWS_ENDPOINT_URL_ECS"
)

// The SDK service ids of the APIs the Cloud calls.
var cloudServices = []string{"STS", "EC2", "RDS", "ECS"}

// Role session names, as CloudTrail in the target account shows them: the
// executor's is its function's name (contract.ExecutorName), the API's
// connection test's this one.
const SessionTest = "nucleus-connection-test"

// Cloud reaches the accounts Nucleus manages: STS with the function's own
// credentials, then, in the executor (services/nucleus/executor), EC2, RDS
// and ECS with the credentials of the account's role. Only STS is called
// here, for the API's connection test and the executor's AssumeRole.
type Cloud struct {
	base   aws.Config
	getenv func(string) string
}

// NewCloud builds a Cloud from the function's environment (awsconf.Load:
// with a loopback endpoint and no access key, dummy credentials sign).
func NewCloud(ctx context.Context, getenv func(string) string) (*Cloud, error) {
	cfg, err := awsconf.Load(ctx, getenv, cloudServices...)
	if err != nil {
		return nil, err
	}
	return &Cloud{base: cfg, getenv: getenv}, nil
}

// NewCloudFromConfig is NewCloud with a given configuration and endpoint
// variables (EnvEndpointSTS, … → URL), for tests.
func NewCloudFromConfig(cfg aws.Config, endpoints map[string]string) *Cloud {
	return &Cloud{base: cfg, getenv: func(k string) string { return endpoints[k] }}
}

// Role is an assumed account role.
type Role struct {
	// AssumedRoleARN is the session's identity
	// (arn:aws:sts::<account>:assumed-role/<role>/<session>).
	AssumedRoleARN string
	creds          aws.CredentialsProvider
}

// Assume calls STS AssumeRole for roleARN, with ExternalId when
// externalID is set. The session lasts STS's default hour, longer than
// any run.
func (c *Cloud) Assume(ctx context.Context, roleARN, externalID, session string) (*Role, error) {
	params := url.Values{"RoleArn": {roleARN}, "RoleSessionName": {session}}
	if externalID != "" {
		params.Set("ExternalId", externalID)
	}
	var out struct {
		Credentials struct {
			AccessKeyID     string `xml:"AccessKeyId"`
			SecretAccessKey string `xml:"SecretAccessKey"`
			SessionToken    string `xml:"SessionToken"`
		} `xml:"AssumeRoleResult>Credentials"`
		Arn string `xml:"AssumeRoleResult>AssumedRoleUser>Arn"`
	}
	if err := c.sts(c.base.Credentials).Query(ctx, "AssumeRole", params, &out); err != nil {
		return nil, err
	}
	cr := out.Credentials
	return &Role{
		AssumedRoleARN: out.Arn,
		creds:          credentials.NewStaticCredentialsProvider(cr.AccessKeyID, cr.SecretAccessKey, cr.SessionToken),
	}, nil
}

// CallerIdentity asks STS who the role's credentials are: proof that they
// work, needing no permission in the target account.
func (c *Cloud) CallerIdentity(ctx context.Context, r *Role) (string, error) {
	var out struct {
		Arn string `xml:"GetCallerIdentityResult>Arn"`
	}
	if err := c.sts(r.creds).Query(ctx, "GetCallerIdentity", nil, &out); err != nil {
		return "", err
	}
	return out.Arn, nil
}

// sts is an STS client signing with creds. STS goes through
// platform/awsrpc, as the executor's EC2, RDS and ECS calls do: its SDK
// client's package initialiser ran in both Nucleus functions' cold starts
// for two operations.
func (c *Cloud) sts(creds aws.CredentialsProvider) *awsrpc.Client {
	cfg := c.base.Copy()
	cfg.Credentials = creds
	return c.Client(awsrpc.STS, cfg)
}

// Client is a client of svc with cfg (Regional's, in the executor) at the
// endpoint the environment sets for svc: a loopback server in tests and
// make dev, AWS's regional one in Lambda.
func (c *Cloud) Client(svc awsrpc.Service, cfg aws.Config) *awsrpc.Client {
	cfg.BaseEndpoint = c.Endpoint(svc.ID)
	return awsrpc.New(svc, cfg)
}

// Regional returns a configuration for region signed by the role: what
// the executor's EC2, RDS and ECS clients are built with (Client).
func (c *Cloud) Regional(r *Role, region string) aws.Config {
	cfg := c.base.Copy()
	cfg.Region = region
	cfg.Credentials = r.creds
	return cfg
}

// Endpoint is a client's BaseEndpoint for serviceID (an SDK service id,
// "EC2"): nil unless the environment points it at a loopback server.
func (c *Cloud) Endpoint(serviceID string) *string { return awsconf.BaseEndpoint(c.getenv, serviceID) }

// AWSError is the part of an AWS error an audit entry records.
type AWSError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// DescribeError is err as an audit entry records it: the AWS error code
// and message, or ClientError for a failure before AWS answered.
func DescribeError(err error) AWSError {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return AWSError{Code: apiErr.ErrorCode(), Message: apiErr.ErrorMessage()}
	}
	return AWSError{Code: "ClientError", Message: err.Error()}
}
