package gen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moduleRoot is lambdas/client, seen from this package's directory.
const moduleRoot = "../.."

// TestClientsAreFresh fails when a committed <service>/client.gen.go is not
// what the pinned generator makes from docs/api/<service>.openapi.json now,
// or when a document has no client: run `cd lambdas/client && go run
// ./cmd/clientgen` (make snapshots does) and review the diff.
func TestClientsAreFresh(t *testing.T) {
	tmp := t.TempDir()
	bin, err := Install(tmp)
	require.NoError(t, err, "the pinned generator")
	out := filepath.Join(tmp, "out")
	names, err := Generate(bin, filepath.Join(moduleRoot, DocsDir), out)
	require.NoError(t, err, "generating the clients")
	require.Len(t, names, 5, "a client per service document")
	for _, name := range names {
		want, err := os.ReadFile(filepath.Join(out, name, File))
		require.NoError(t, err, "%s: generated", name)
		got, err := os.ReadFile(filepath.Join(moduleRoot, name, File))
		require.NoError(t, err, "%s: the committed client (go run ./cmd/clientgen)", name)
		assert.Equal(t, string(want), string(got), "%s: lambdas/client/%s/%s is stale; cd lambdas/client && go run ./cmd/clientgen", name, name, File)
	}
	assert.Contains(t, string(must(t, filepath.Join(moduleRoot, names[0], File))), "version v2.8.2", "the header names the pinned generator")
}

// TestServicesAreTheDocuments: the services are read from the documents'
// directory, and a directory without documents is an error.
func TestServicesAreTheDocuments(t *testing.T) {
	names, err := Services(filepath.Join(moduleRoot, DocsDir))
	require.NoError(t, err)
	assert.Equal(t, []string{"agenticpm", "itsm", "nucleus", "rezagent", "stak"}, names)
	_, err = Services(t.TempDir())
	assert.Error(t, err, "no documents")
}

func must(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
