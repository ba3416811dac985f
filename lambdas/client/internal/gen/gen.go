// Package gen writes the typed clients of this module, one package per
// service (<service>/client.gen.go), from the services' OpenAPI documents
// (docs/api/<service>.openapi.json) with the pinned oapi-codegen.
package gen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Generator is the pinned generator: oapi-codegen, its types and client.
// Its own go.mod pins its dependencies; the generated code needs only
// github.com/oapi-codegen/runtime (this module's go.mod).
const Generator = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// File is the generated file of each service's package.
const File = "client.gen.go"

// DocsDir is the documents' directory relative to this module's root
// (lambdas/client).
const DocsDir = "../../docs/api"

// Services are the services with a document in docsDir, sorted.
func Services(docsDir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(docsDir, "*.openapi.json"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		out = append(out, strings.TrimSuffix(filepath.Base(m), ".openapi.json"))
	}
	slices.Sort(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no *.openapi.json in %s", docsDir)
	}
	return out, nil
}

// Install builds the pinned generator into dir and returns its path.
func Install(dir string) (string, error) {
	cmd := exec.Command("go", "install", Generator)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %w\n%s", Generator, err, out)
	}
	return filepath.Join(dir, "oapi-codegen"), nil
}

// Generate writes every service's client under outDir
// (<outDir>/<service>/client.gen.go) from the documents in docsDir, with
// the generator at bin.
func Generate(bin, docsDir, outDir string) ([]string, error) {
	names, err := Services(docsDir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if err := os.MkdirAll(filepath.Join(outDir, name), 0o755); err != nil {
			return nil, err
		}
		doc, err := filepath.Abs(filepath.Join(docsDir, name+".openapi.json"))
		if err != nil {
			return nil, err
		}
		out, err := filepath.Abs(filepath.Join(outDir, name, File))
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(bin, "-generate", "types,client", "-package", name, "-o", out, doc)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %w\n%s", name, err, b)
		}
	}
	return names, nil
}
