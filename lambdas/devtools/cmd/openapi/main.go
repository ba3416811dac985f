// Command openapi writes every service's OpenAPI document,
// docs/api/<service>.openapi.json, from its contract and its handlers' Go
// types (lambdas/devtools/openapi). make snapshots runs it; a test fails
// when a committed document is stale.
//
//	go run ./lambdas/devtools/cmd/openapi [-root <repository root>]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/lambdas/devtools/openapi"
	"github.com/dynastack/dynastack/lambdas/services"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "openapi:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	names, docs, err := Documents()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, openapi.Dir), 0o755); err != nil {
		return err
	}
	for _, name := range names {
		b, err := openapi.Marshal(docs[name])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(root, openapi.File(name)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Documents builds every service's document, by name, in catalog order.
func Documents() ([]string, map[string]*openapi3.T, error) {
	ops := services.Operations()
	var names []string
	docs := map[string]*openapi3.T{}
	for _, c := range catalog.Services() {
		doc, err := openapi.Document(c, ops[c.Name])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		names = append(names, c.Name)
		docs[c.Name] = doc
	}
	return names, docs, nil
}
