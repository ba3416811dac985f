// Package processor is rez_agent's processor function: rezagent.Processor
// with the SSM client that reads its ntfy token. That client lives here,
// not in package rezagent, so that the API's and the scheduler's
// bootstraps do not link it: SSM's package initialisers (its schemas above
// all) took about 3 ms of every one of their cold starts
// (docs/functions.md, "Cold start").
package processor

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/queue"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
)

// Function is the processor's binding: cmd/rezagent-processor runs it in
// Lambda.
func Function() fn.Binding { return fn.Queue(contract.Processor, New) }

// New builds the processor from its function's environment.
func New(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (queue.Consumer, error) {
	return rezagent.NewProcessor(ctx, getenv, ReadToken, opts...)
}

// ReadToken reads the ntfy token from the SSM SecureString name, once per
// execution environment (at init), with an SSM client built from getenv.
func ReadToken(ctx context.Context, getenv func(string) string, name string) (string, error) {
	cfg, err := awsconf.For(ctx, getenv, "SSM")
	if err != nil {
		return "", err
	}
	return NtfyToken(ctx, ssm.NewFromConfig(cfg), name)
}

// SSMAPI is the part of *ssm.Client NtfyToken uses.
type SSMAPI interface {
	GetParameter(context.Context, *ssm.GetParameterInput, ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// NtfyToken reads the ntfy access token from an SSM SecureString.
func NtfyToken(ctx context.Context, client SSMAPI, name string) (string, error) {
	out, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("rezagent: read ntfy token %s: %w", name, err)
	}
	if out.Parameter == nil || aws.ToString(out.Parameter.Value) == "" {
		return "", fmt.Errorf("rezagent: ntfy token parameter %s is empty", name)
	}
	return aws.ToString(out.Parameter.Value), nil
}
