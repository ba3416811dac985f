// Command itsm is the ITSM tickets API (provided.al2023, built as bootstrap
// with -tags lambda.norpc).
package main

import (
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
)

func main() { fn.Main(itsm.APIFunction()) }
