// Package processor is rez_agent's processor function: rezagent.Processor
// with the SSM read of its ntfy token. That read is one GetParameter at
// init, through platform/awsrpc: SSM's SDK client ran package initialisers
// (its schemas above all) of 1.6–3 ms in every processor cold start
// (docs/functions.md, "Cold start").
package processor

import (
	"context"
	"fmt"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/awsrpc"
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

// ReadToken reads the ntfy access token from the SSM SecureString name,
// once per execution environment (at init), with the AWS configuration
// getenv gives.
func ReadToken(ctx context.Context, getenv func(string) string, name string) (string, error) {
	cfg, err := awsconf.For(ctx, getenv, awsrpc.SSM.ID)
	if err != nil {
		return "", err
	}
	var out struct {
		Parameter struct {
			Value string `json:"Value"`
		} `json:"Parameter"`
	}
	in := map[string]any{"Name": name, "WithDecryption": true}
	if err := awsrpc.New(awsrpc.SSM, cfg).JSON(ctx, "GetParameter", in, &out); err != nil {
		return "", fmt.Errorf("rezagent: read ntfy token %s: %w", name, err)
	}
	if out.Parameter.Value == "" {
		return "", fmt.Errorf("rezagent: ntfy token parameter %s is empty", name)
	}
	return out.Parameter.Value, nil
}
