// Command stak is the Stak notification inbox HTTP API Lambda function
// (provided.al2023, built as bootstrap with -tags lambda.norpc).
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/stak/stakapi"
)

func main() { fn.Main(stakapi.Function()) }
