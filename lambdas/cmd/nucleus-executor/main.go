// Command nucleus-executor is the Nucleus schedule executor (provided.al2023,
// built as bootstrap with -tags lambda.norpc), invoked by an EventBridge
// Scheduler schedule: it starts and stops the resources of due schedules
// (docs/schemas/nucleus.md, "Executor").
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/nucleus/executor"
)

func main() { fn.Main(executor.Function()) }
