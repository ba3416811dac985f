package release_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dynastack/dynastack/infra/release"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecide(t *testing.T) {
	for _, tt := range []struct {
		name    string
		state   release.State
		want    release.Action
		wantErr string
	}{
		{"no tag yet", release.State{Version: "v0.3.0", ParentVersion: "v0.2.0"}, release.Create, ""},
		{"no tag yet, version declared earlier", release.State{Version: "v0.3.0", ParentVersion: "v0.3.0"}, release.Create, ""},
		{"tag exists here", release.State{Version: "v0.3.0", ParentVersion: "v0.2.0", TagCommit: "aaaa", TagIsAncestor: true}, release.Tagged, ""},
		{"released earlier, version unchanged", release.State{Version: "v0.3.0", ParentVersion: "v0.3.0", TagCommit: "bbbb", TagIsAncestor: true}, release.Released, ""},
		{"tag on another commit, declared here", release.State{Version: "v0.3.0", ParentVersion: "v0.2.0", TagCommit: "bbbb", TagIsAncestor: true}, 0, "constructs/v0.3.0 names bbbb, not aaaa (this commit declares it)"},
		{"tag on a commit outside this history", release.State{Version: "v0.3.0", ParentVersion: "v0.3.0", TagCommit: "cccc"}, 0, "constructs/v0.3.0 names cccc, not aaaa (that commit is not in this history)"},
		{"no version declared", release.State{}, release.Undeclared, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.state
			s.Module, s.Head = "constructs", "aaaa"
			d, err := release.Decide(s)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, release.ErrTagElsewhere)
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, d.Action, "action")
		})
	}
}

// git runs git in dir with a fixed identity, failing the test on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func commitChangelog(t *testing.T, dir, heading string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "constructs", "CHANGELOG.md"), []byte("# Changelog\n\n"+heading+"\n\n- x\n"), 0o644))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", heading)
}

// TestPlanAndApply: the script's three decisions on a real repository,
// with a bare origin it pushes to.
func TestPlanAndApply(t *testing.T) {
	origin := t.TempDir()
	git(t, origin, "init", "-q", "--bare")
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", origin)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "constructs"), 0o755))
	g := release.Git{Dir: dir}

	commitChangelog(t, dir, "## v0.2.0 — 2026-11-20")
	commitChangelog(t, dir, "## v0.3.0 — 2026-11-28")
	ds, err := release.Plan(g, "HEAD")
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, release.Create, ds[0].Action, "no tag yet")
	lines, err := release.Apply(g, "HEAD", ds, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"constructs: tagged constructs/v0.3.0"}, lines)
	head := git(t, dir, "rev-parse", "HEAD")
	assert.Equal(t, head, git(t, origin, "rev-parse", "constructs/v0.3.0^{commit}"), "pushed to origin at the commit")

	ds, err = release.Plan(g, "HEAD")
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, release.Tagged, ds[0].Action, "tag exists here: a second run does nothing")

	// A later commit that leaves the changelog's version as it was: the
	// tag is on the commit before, nothing to do.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other"), []byte("x"), 0o644))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "other")
	ds, err = release.Plan(g, "HEAD")
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, release.Released, ds[0].Action, "version unchanged since its tag")

	// A branch that declares v0.3.0 again, as if released: its tag is
	// elsewhere, so the script fails loudly.
	git(t, dir, "checkout", "-q", "-b", "again", "HEAD~2")
	commitChangelog(t, dir, "## v0.3.0 — again")
	_, err = release.Plan(g, "HEAD")
	require.ErrorIs(t, err, release.ErrTagElsewhere, "tag on another commit fails loudly")
	git(t, dir, "checkout", "-q", "-")

	commitChangelog(t, dir, "## v0.3.1 — 2026-11-29")
	ds, err = release.Plan(g, "HEAD")
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, release.Create, ds[0].Action, "the next version")
	assert.Equal(t, "constructs/v0.3.1", ds[0].Tag)
}
