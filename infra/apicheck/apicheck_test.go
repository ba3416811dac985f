package apicheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/infra/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProblem(t *testing.T) {
	breaking := []string{"./catalog.Services: removed"}
	for _, tt := range []struct {
		name string
		r    Report
		want string // "" when the change may ship
	}{
		{"no API change", Report{OldVersion: "v0.1.0", NewVersion: "v0.1.0"}, ""},
		{"an addition, no bump", Report{Compatible: []string{"./table.X: added"}, OldVersion: "v0.1.0", NewVersion: "v0.1.0"}, ""},
		{"incompatible, no bump", Report{Incompatible: breaking, OldVersion: "v0.1.0", NewVersion: "v0.1.0"}, "1 incompatible API change(s) with CHANGELOG.md at v0.1.0 (was v0.1.0): a team pinning v0.1.0 would break on upgrade; bump to v0.2.0"},
		{"incompatible, patch bump", Report{Incompatible: breaking, OldVersion: "v0.1.3", NewVersion: "v0.1.4"}, "bump to v0.2.0"},
		{"incompatible, v0 minor bump", Report{Incompatible: breaking, OldVersion: "v0.1.3", NewVersion: "v0.2.0"}, ""},
		{"incompatible after v1, minor bump", Report{Incompatible: breaking, OldVersion: "v1.2.0", NewVersion: "v1.3.0"}, "bump to v2.0.0"},
		{"incompatible after v1, major bump", Report{Incompatible: breaking, OldVersion: "v1.2.0", NewVersion: "v2.0.0"}, ""},
		{"backwards", Report{OldVersion: "v0.2.0", NewVersion: "v0.1.9"}, "went backwards: v0.1.9 after v0.2.0"},
		{"no changelog at the base", Report{Incompatible: breaking, NewVersion: "v0.1.0"}, ""},
		{"no version", Report{OldVersion: "v0.1.0"}, `declares no version`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.r.Problem()
			if tt.want == "" {
				assert.Empty(t, got, "Problem()")
			} else {
				assert.Contains(t, got, tt.want, "Problem()")
			}
		})
	}
}

// TestDeliberateIncompatibleChange runs the real apidiff on the module and
// on a test copy of it: a changed signature fails until the CHANGELOG bumps
// the version for it; an addition passes as it is.
func TestDeliberateIncompatibleChange(t *testing.T) {
	root, err := config.RepoRoot()
	require.NoError(t, err)
	bin := filepath.Join(root, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	tool, err := Install(bin)
	require.NoError(t, err)
	base := filepath.Join(root, "constructs")
	version, err := Version(base)
	require.NoError(t, err, "constructs/CHANGELOG.md")
	require.NotEmpty(t, version, "constructs/CHANGELOG.md: version")
	next := fmt.Sprintf("v0.%d.0", parse(version)[1]+1)
	for _, tt := range []struct {
		name      string
		edit      func(t *testing.T, dir string)
		fails     bool
		changes   string
		changelog string // the new top section, "" to keep it
	}{
		{"a changed signature", signature, true, "./catalog.Services: changed from func() []", ""},
		{"the same change with a breaking bump", signature, false, "./catalog.Services: changed", "## " + next + " — 2026-11-27\n\n### Breaking\n\n- catalog.Services takes options.\n\n"},
		{"an addition", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, "catalog", "catalog.go"), "\n// Count is new.\nfunc Count() int { return len(Services()) }\n")
		}, false, "./catalog.Count: added", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			head := t.TempDir()
			require.NoError(t, os.CopyFS(head, os.DirFS(base)))
			tt.edit(t, head)
			if tt.changelog != "" {
				b, _ := os.ReadFile(filepath.Join(head, "CHANGELOG.md"))
				s := strings.Replace(string(b), "## "+version, tt.changelog+"## "+version, 1)
				require.NoError(t, os.WriteFile(filepath.Join(head, "CHANGELOG.md"), []byte(s), 0o644))
			}
			r, err := Compare(tool, base, head)
			require.NoError(t, err)
			all := strings.Join(append(r.Incompatible, r.Compatible...), "\n")
			assert.Contains(t, all, tt.changes, "changes")
			p := r.Problem()
			assert.Equal(t, tt.fails, p != "", "Problem() = %q, want failure %v (report %+v)", p, tt.fails, r)
		})
	}
}

func signature(t *testing.T, dir string) {
	p := filepath.Join(dir, "catalog", "catalog.go")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	s := strings.Replace(string(b), "func Services() []service.Contract {", "func Services(_ ...int) []service.Contract {", 1)
	require.NotEqual(t, string(b), s, "catalog.Services not found: update the deliberate change")
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
}

func appendFile(t *testing.T, path, text string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString(text)
	require.NoError(t, err)
}

// TestReadmePinsTheCurrentVersion: the README's example of how another team
// pins the module names the version the CHANGELOG declares.
func TestReadmePinsTheCurrentVersion(t *testing.T) {
	root, err := config.RepoRoot()
	require.NoError(t, err)
	version, _ := Version(filepath.Join(root, "constructs"))
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "go get "+ModulePath+"@"+version, "README.md")
}
