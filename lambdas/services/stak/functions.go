package stak

import (
	"context"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/streams"
)

// The service's functions, each bound to its constructor: cmd/<name> runs
// one in Lambda, the local runner and the tests build them all.

func APIFunction() fn.Binding { return fn.HTTP(contract.API, New) }

func StreamFunction() fn.Binding { return fn.Stream(contract.StreamConsumer, newStreamConsumer) }

// Functions lists every function of the contract.
func Functions() []fn.Binding { return []fn.Binding{APIFunction(), StreamFunction()} }

// newStreamConsumer is NewConsumer as a streams.Consumer.
func newStreamConsumer(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (streams.Consumer, error) {
	return NewConsumer(ctx, getenv, opts...)
}
