package stak

import (
	"context"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// The stream consumer's binding: cmd/stak-stream runs it in Lambda. The
// API's is stakapi.Function (services/stak/stakapi), in a package of its
// own that binds the JSON Schema library the API validates bodies with,
// so that the consumer's bootstrap does not link it; lambdas/services
// lists both for the local runner and the tests.

func StreamFunction() fn.Binding { return fn.Stream(contract.StreamConsumer, newStreamConsumer) }

// Functions lists Stak's functions bound in this package (the API's is stakapi's):
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{StreamFunction()} }

// newStreamConsumer is NewConsumer as a fn.StreamConsumer.
func newStreamConsumer(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (fn.StreamConsumer, error) {
	return NewConsumer(ctx, getenv, opts...)
}
