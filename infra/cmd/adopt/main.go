// Command adopt checks, offline, whether a dynastack stack can import a live
// DynamoDB table as it is (make adopt; docs/adopting-tables.md).
package main

import (
	"os"

	"github.com/dynastack/dynastack/infra/adopt"
)

func main() { os.Exit(adopt.Run(os.Args[1:], os.Stdout, os.Stderr)) }
