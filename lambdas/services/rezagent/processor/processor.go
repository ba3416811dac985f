// Package processor is rez_agent's processor function: rezagent.Processor
// with the SSM read of its ntfy token, one GetParameter at init. SSM's
// SDK client is imported here, not in package rezagent, so that the API's
// and the scheduler's bootstraps do not link it: an SDK service package's
// initialiser runs at every cold start of a binary that imports it
// (SSM's schemas 1.6–1.7 ms; docs/functions.md, "Cold start").
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
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
)

// Function is the processor's binding: cmd/rezagent-processor runs it in
// Lambda.
func Function() fn.Binding { return fn.Queue(contract.Processor, New) }

// Functions lists the functions bound in this package:
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{Function()} }

// New builds the processor from its function's environment.
func New(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (fn.QueueConsumer, error) {
	return rezagent.NewProcessor(ctx, getenv, ReadToken, opts...)
}

// ReadToken reads the ntfy access token from the SSM SecureString name,
// once per execution environment (at init), with the AWS configuration
// getenv gives.
func ReadToken(ctx context.Context, getenv func(string) string, name string) (string, error) {
	cfg, err := awsconf.For(ctx, getenv, ssm.ServiceID)
	if err != nil {
		return "", err
	}
	out, err := ssm.NewFromConfig(cfg).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("rezagent: read ntfy token %s: %w", name, err)
	}
	var value string
	if out.Parameter != nil {
		value = aws.ToString(out.Parameter.Value)
	}
	if value == "" {
		return "", fmt.Errorf("rezagent: ntfy token parameter %s is empty", name)
	}
	return value, nil
}
