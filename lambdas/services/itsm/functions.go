package itsm

import (
	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// The service's functions, each bound to its constructor: cmd/<name> runs
// one in Lambda, the local runner and the tests build them all.

func APIFunction() fn.Binding { return fn.HTTP(contract.API, New) }

// Functions lists the functions bound in this package (all of ITSM's):
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{APIFunction()} }
