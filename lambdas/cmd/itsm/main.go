// Command itsm is the ITSM tickets Lambda function (provided.al2023, built
// as bootstrap with -tags lambda.norpc).
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/lambdahttp"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
)

func main() { lambdahttp.Main("itsm", itsm.New) }
