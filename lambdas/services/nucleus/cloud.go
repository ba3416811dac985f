package nucleus

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/aws/smithy-go"

	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
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

// Role session names, as CloudTrail in the target account shows them: the
// executor's is its function's name (contract.ExecutorName), the API's
// connection test's this one.
const SessionTest = "nucleus-connection-test"

// Cloud reaches the accounts Nucleus manages: STS with the function's own
// credentials, then, in the executor (services/nucleus/executor), EC2, RDS
// and ECS with the credentials of the account's role. Only STS is called
// here, for the API's connection test and the executor's AssumeRole, so
// this package links STS's client alone: the executor's clients are
// linked by the executor's bootstrap only.
type Cloud struct {
	base   aws.Config
	sts    *sts.Client
	getenv func(string) string
}

// NewCloud builds a Cloud from the function's environment (awsconf.Load:
// with a loopback endpoint and no access key, dummy credentials sign).
// The function's own credentials sign STS calls only (the rest are the
// role's), so STS's endpoint alone decides whether they are the dummy
// ones.
func NewCloud(ctx context.Context, getenv func(string) string) (*Cloud, error) {
	cfg, err := awsconf.Load(ctx, getenv, sts.ServiceID)
	if err != nil {
		return nil, err
	}
	return newCloud(cfg, getenv), nil
}

// NewCloudFromConfig is NewCloud with a given configuration and endpoint
// variables (EnvEndpointSTS, … → URL), for tests.
func NewCloudFromConfig(cfg aws.Config, endpoints map[string]string) *Cloud {
	return newCloud(cfg, func(k string) string { return endpoints[k] })
}

func newCloud(cfg aws.Config, getenv func(string) string) *Cloud {
	c := &Cloud{base: cfg, getenv: getenv}
	// One client for every call: the SDK's clients are safe for
	// concurrent use, and its retry token bucket then spans the run.
	c.sts = sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint = c.Endpoint(sts.ServiceID) })
	return c
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
	in := &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String(session)}
	if externalID != "" {
		in.ExternalId = aws.String(externalID)
	}
	out, err := c.sts.AssumeRole(ctx, in)
	if err != nil {
		return nil, err
	}
	var cr types.Credentials
	if out.Credentials != nil {
		cr = *out.Credentials
	}
	r := &Role{creds: credentials.NewStaticCredentialsProvider(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), aws.ToString(cr.SessionToken))}
	if u := out.AssumedRoleUser; u != nil {
		r.AssumedRoleARN = aws.ToString(u.Arn)
	}
	return r, nil
}

// CallerIdentity asks STS who the role's credentials are: proof that they
// work, needing no permission in the target account.
func (c *Cloud) CallerIdentity(ctx context.Context, r *Role) (string, error) {
	out, err := c.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(o *sts.Options) { o.Credentials = r.creds })
	if err != nil {
		return "", err
	}
	return aws.ToString(out.Arn), nil
}

// Config is the configuration of a client of serviceID (the SDK's
// service ID: ec2.ServiceID, …) in region, signed by the role, at the
// endpoint the environment sets for the service: a loopback server in
// tests and make dev, AWS's regional one in Lambda. The executor builds
// its EC2, RDS and ECS clients from it.
func (c *Cloud) Config(r *Role, region, serviceID string) aws.Config {
	cfg := c.base.Copy()
	cfg.Region = region
	cfg.Credentials = r.creds
	cfg.BaseEndpoint = c.Endpoint(serviceID)
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
