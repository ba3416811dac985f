package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/lambdas/devtools/openapi"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
)

// TestDocumentsAreFresh fails when a committed docs/api/<service>.openapi.json
// is not what the contract and the Go types make now: run
// `go run ./lambdas/devtools/cmd/openapi` (make snapshots does) and review
// the diff.
func TestDocumentsAreFresh(t *testing.T) {
	root, err := repo.Root("")
	require.NoError(t, err, "the repository root")
	names, docs, err := Documents()
	require.NoError(t, err, "the documents")
	require.Len(t, names, len(catalog.Services()), "a document per service")
	for _, name := range names {
		want, err := openapi.Marshal(docs[name])
		require.NoError(t, err, "%s: marshal", name)
		got, err := os.ReadFile(filepath.Join(root, openapi.File(name)))
		require.NoError(t, err, "%s: the committed document", name)
		assert.Equal(t, string(want), string(got), "%s: %s is stale; go run ./lambdas/devtools/cmd/openapi", name, openapi.File(name))
	}
}

// TestDocumentsAreValid loads each committed document with kin-openapi's
// loader and validates it as OpenAPI 3.1 (schemas as JSON Schema 2020-12).
func TestDocumentsAreValid(t *testing.T) {
	root, err := repo.Root("")
	require.NoError(t, err, "the repository root")
	for _, c := range catalog.Services() {
		doc, err := openapi.Load(filepath.Join(root, openapi.File(c.Name)))
		require.NoError(t, err, "%s: a valid OpenAPI document", c.Name)
		assert.Equal(t, openapi.Version, doc.OpenAPI, "%s: OpenAPI version", c.Name)
		assert.Equal(t, c.APIVersion, doc.Info.Version, "%s: info.version is the contract's APIVersion", c.Name)
		var n int
		for _, f := range c.Functions {
			for _, r := range f.Routes {
				n++
				item := doc.Paths.Find(openapiPath(r.Path))
				if assert.NotNil(t, item, "%s: path of %s", c.Name, r.Key()) {
					assert.NotNil(t, item.GetOperation(r.Method), "%s: operation %s", c.Name, r.Key())
				}
			}
		}
		assert.Positive(t, n, "%s: routes", c.Name)
	}
}

// TestInvalidDocumentFails proves the validator refuses a broken document.
func TestInvalidDocumentFails(t *testing.T) {
	_, err := openapi.Parse([]byte(`{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"nonsense"}}}}}}}}}`))
	assert.Error(t, err, "a schema type that does not exist")
}

func openapiPath(p string) string {
	out := []byte(p)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == '+' && out[i+1] == '}' {
			out = append(out[:i], out[i+1:]...)
		}
	}
	return string(out)
}
