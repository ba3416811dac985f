// Command rezagent is the rez_agent messages Lambda function
// (provided.al2023, built as bootstrap with -tags lambda.norpc).
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/publisher"
)

func main() { fn.Main(publisher.APIFunction()) }
