// Command stak-stream is the Lambda function consuming the Stak inbox
// table's DynamoDB stream (provided.al2023, built as bootstrap with -tags
// lambda.norpc). Its event source mapping must enable
// ReportBatchItemFailures: the handler reports failed records instead of
// failing the batch (docs/schemas/stak.md, "Stream consumer").
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

func main() { fn.Main(stak.StreamFunction()) }
