// Command clientgen rewrites the typed clients (lambdas/client/<service>)
// from docs/api/<service>.openapi.json with the pinned oapi-codegen. make
// snapshots runs it from lambdas/client; a test fails when a client is stale.
//
//	cd lambdas/client && go run ./cmd/clientgen
package main

import (
	"fmt"
	"os"

	"github.com/dynastack/dynastack/lambdas/client/internal/gen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "clientgen:", err)
		os.Exit(1)
	}
}

func run() error {
	tmp, err := os.MkdirTemp("", "clientgen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := gen.Install(tmp)
	if err != nil {
		return err
	}
	names, err := gen.Generate(bin, gen.DocsDir, ".")
	if err != nil {
		return err
	}
	fmt.Println("clientgen:", names)
	return nil
}
