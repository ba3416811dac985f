package rezagent

import (
	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// The API's and the scheduler's bindings: cmd/<name> runs one in Lambda.
// The processor's is processor.Function (services/rezagent/processor), in
// a package of its own so that this one links no SSM client;
// lambdas/services lists all three for the local runner and the tests.

func APIFunction() fn.Binding { return fn.HTTP(contract.API, New) }

func SchedulerFunction() fn.Binding { return fn.Schedule(contract.Scheduler, NewScheduler) }
