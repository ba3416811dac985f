// Command rezagent-processor is rez_agent's queue consumer: it delivers
// each queued message to ntfy (SQS event source mapping with
// ReportBatchItemFailures; docs/schemas/rezagent.md, "Pipeline").
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/processor"
)

func main() { fn.Main(processor.Function()) }
