package nucleus

import (
	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// The service's functions, each bound to its constructor: cmd/<name> runs
// one in Lambda, the local runner and the tests build them all.

func APIFunction() fn.Binding { return fn.HTTP(contract.API, New) }

func ExecutorFunction() fn.Binding { return fn.Schedule(contract.Executor, NewExecutor) }

// Functions lists every function of the contract.
func Functions() []fn.Binding { return []fn.Binding{APIFunction(), ExecutorFunction()} }
