// Command rezagent-scheduler is rez_agent's scheduled function: each
// EventBridge Scheduler fire creates one scheduled_hello message and
// publishes it (docs/schemas/rezagent.md, "Pipeline").
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/publisher"
)

func main() { fn.Main(publisher.SchedulerFunction()) }
