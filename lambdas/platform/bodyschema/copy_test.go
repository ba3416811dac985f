package bodyschema_test

import (
	"bytes"
	"encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// upstream is the release lambdas/third_party/jsonschema copies; its
// README's "Upgrading" says to change it here with the copy.
const upstream = "github.com/santhosh-tekuri/jsonschema/v6@v6.0.3"

// copyDir is the patched copy, from this package's directory.
const copyDir = "../../third_party/jsonschema"

// ours are the copy's files that upstream does not have.
var ours = []string{"README.md", "dynastack.patch"}

// TestCopyIsUpstreamPlusPatch rebuilds the copy from the module cache's
// upstream release and dynastack.patch, and fails on any other
// difference: a hand edit not in the patch, a file added or lost, or a
// patch that no longer applies. The replace in lambdas/go.mod hides the
// copy from `go get -u` and from govulncheck, so this is what keeps it
// honest; `make vulncheck` scans the upstream release itself.
func TestCopyIsUpstreamPlusPatch(t *testing.T) {
	src := downloadUpstream(t)
	want := t.TempDir()
	require.NoError(t, copyRelease(src, want), "copying %s", upstream)
	patch, err := filepath.Abs(filepath.Join(copyDir, "dynastack.patch"))
	require.NoError(t, err)
	apply := exec.Command("git", "apply", "-p1", patch)
	apply.Dir = want
	out, err := apply.CombinedOutput()
	require.NoError(t, err, "dynastack.patch does not apply to %s (refresh it as the copy's README says):\n%s", upstream, out)

	got := files(t, copyDir)
	expected := files(t, want)
	for _, name := range ours {
		assert.Contains(t, got, name, "the copy has no %s", name)
		delete(got, name)
	}
	for name, body := range expected {
		if have, ok := got[name]; assert.True(t, ok, "%s of %s is missing from the copy", name, upstream) {
			assert.Equal(t, body, have, "%s differs from %s with dynastack.patch applied: put the change in the patch, or undo it", name, upstream)
		}
		delete(got, name)
	}
	assert.Empty(t, slices.Sorted(maps.Keys(got)), "in the copy but not in %s: remove them, or list them in ours", upstream)
}

// downloadUpstream returns the directory of the upstream release in the
// module cache, downloading it (checked against go.sum's database) first.
func downloadUpstream(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", upstream)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go mod download %s:\n%s%s", upstream, out, stderr.Bytes())
	var mod struct{ Dir, Error string }
	require.NoError(t, json.Unmarshal(out, &mod), "go mod download %s:\n%s", upstream, out)
	require.NotEmpty(t, mod.Dir, "go mod download %s: %s\n%s", upstream, mod.Error, out)
	return mod.Dir
}

// copyRelease copies what the copy keeps of a release: its Go sources and
// data, without tests, test data, workspace files, dot-files and the
// README (the copy's README is its own).
func copyRelease(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "go.work") || rel == "README.md" {
			return nil
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), body, 0o644)
	})
}

// files reads every file under dir by its slash-separated relative path.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		body, err := os.ReadFile(path)
		m[filepath.ToSlash(rel)] = body
		return err
	})
	require.NoError(t, err)
	return m
}
