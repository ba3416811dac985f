package bodyschema_test

import (
	"bytes"
	"encoding/json"
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
	if err := copyRelease(src, want); err != nil {
		t.Fatalf("copying %s: %v", upstream, err)
	}
	patch, err := filepath.Abs(filepath.Join(copyDir, "dynastack.patch"))
	if err != nil {
		t.Fatal(err)
	}
	apply := exec.Command("git", "apply", "-p1", patch)
	apply.Dir = want
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("dynastack.patch does not apply to %s (refresh it as the copy's README says): %v\n%s", upstream, err, out)
	}

	got := files(t, copyDir)
	expected := files(t, want)
	for _, name := range ours {
		if _, ok := got[name]; !ok {
			t.Errorf("the copy has no %s", name)
		}
		delete(got, name)
	}
	for name, body := range expected {
		have, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s of %s is missing from the copy", name, upstream)
		case !bytes.Equal(have, body):
			t.Errorf("%s differs from %s with dynastack.patch applied: put the change in the patch, or undo it", name, upstream)
		}
		delete(got, name)
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		t.Errorf("%s is in the copy but not in %s: remove it, or list it in ours", name, upstream)
	}
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
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s%s", upstream, err, out, stderr.Bytes())
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %v %s\n%s", upstream, err, mod.Error, out)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	return m
}
