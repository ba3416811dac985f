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
