package agenticpm

import (
	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// The service's functions, each bound to its constructor: cmd/<name> runs
// one in Lambda, the local runner and the tests build them all.

func APIFunction() fn.Binding { return fn.HTTP(contract.API, New) }

func ReleaseFunction() fn.Binding { return fn.Schedule(contract.Release, NewReleaseJob) }

// Functions lists every function of the contract.
func Functions() []fn.Binding { return []fn.Binding{APIFunction(), ReleaseFunction()} }
