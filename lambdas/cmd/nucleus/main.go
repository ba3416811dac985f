// Command nucleus is the Nucleus platform Lambda function (provided.al2023,
// built as bootstrap with -tags lambda.norpc).
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
)

func main() { fn.Main(nucleus.APIFunction()) }
