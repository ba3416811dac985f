// Command stak-drift is the Lambda function of Stak's hourly drift check
// (provided.al2023, built as bootstrap with -tags lambda.norpc): a
// read-only recount of a sample of counters (docs/schemas/stak.md,
// "Drift check").
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

func main() { fn.Main(stak.DriftFunction()) }
