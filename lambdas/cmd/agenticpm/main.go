// Command agenticpm is the AgenticPM data API Lambda function
// (provided.al2023, built as bootstrap with -tags lambda.norpc).
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/agenticpmapi"
)

func main() { fn.Main(agenticpmapi.Function()) }
