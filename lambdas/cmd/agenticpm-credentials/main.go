// Command agenticpm-credentials is AgenticPM's integration credentials
// API Lambda function (provided.al2023, built as bootstrap with -tags
// lambda.norpc).
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/credentialsapi"
)

func main() { fn.Main(credentialsapi.Function()) }
