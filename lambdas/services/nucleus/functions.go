package nucleus

import (
	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// The API's binding: cmd/nucleus runs it in Lambda. The executor's is
// executor.Function (services/nucleus/executor), in a package of its own so
// that this one links no EC2, RDS or ECS client; lambdas/services lists
// both for the local runner and the tests.

func APIFunction() fn.Binding { return fn.HTTP(contract.API, New) }

// Functions lists Nucleus's functions bound in this package (the executor's is executor's):
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{APIFunction()} }
