package stak

import (
	"context"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// The stream consumer's and the drift check's bindings: cmd/stak-stream
// and cmd/stak-drift run them in Lambda. The
// API's is stakapi.Function (services/stak/stakapi), in a package of its
// own that binds the JSON Schema library the API validates bodies with,
// so that the consumer's bootstrap does not link it; lambdas/services
// lists both for the local runner and the tests.

func StreamFunction() fn.Binding { return fn.Stream(contract.StreamConsumer, newStreamConsumer) }

// DriftFunction is the scheduled drift check's binding (cmd/stak-drift).
func DriftFunction() fn.Binding { return fn.Schedule(contract.DriftCheck, NewDriftCheck) }

// Functions lists Stak's functions bound in this package (the API's is stakapi's):
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{StreamFunction(), DriftFunction()} }

// newStreamConsumer is NewConsumer as a fn.StreamConsumer.
func newStreamConsumer(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (fn.StreamConsumer, error) {
	return NewConsumer(ctx, getenv, opts...)
}
