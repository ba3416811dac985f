// Package release tags what a changelog declares: on a merge to main, a
// module whose CHANGELOG.md's top version has no tag gets its tag
// (<module>/vX.Y.Z, Go's form for a module in a subdirectory) at that
// commit (.github/workflows/release.yml, infra/cmd/releasetag).
package release

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/dynastack/dynastack/infra/apicheck"
)

// Modules are the released modules, by directory: each has a CHANGELOG.md
// whose top "## vX.Y.Z" heading is its version (apicheck.Version, the same
// reading make apidiff uses). The service APIs join here once they are
// versioned modules of their own.
var Modules = []string{"constructs"}

// Action is what a module's release needs.
type Action int

const (
	// Create: the version has no tag; tag the commit.
	Create Action = iota
	// Tagged: the tag exists at this commit; nothing to do.
	Tagged
	// Released: the version was tagged at an earlier commit of this
	// history and this commit does not declare it anew (a merge that
	// leaves the changelog's version alone); nothing to do.
	Released
	// Undeclared: the changelog declares no version; nothing to tag.
	Undeclared
)

func (a Action) String() string {
	return [...]string{"create", "tagged", "released", "undeclared"}[a]
}

// ErrTagElsewhere: the commit declares a version (its changelog's top
// version differs from its first parent's) whose tag names another commit,
// or the tag names a commit outside this history. A released version is
// immutable (the Go module proxy and every go.sum keep its hash), so this
// fails loudly instead of moving the tag: the changelog needs a new version.
var ErrTagElsewhere = errors.New("tag exists on another commit")

// Decision is one module's verdict.
type Decision struct {
	Module, Version, Tag string
	Action               Action
}

// State is what Decide needs to know about one module at one commit.
type State struct {
	Module string
	// Version is the changelog's top version at the commit, "" when none;
	// ParentVersion the same at its first parent.
	Version, ParentVersion string
	// Head is the commit; TagCommit the commit the version's tag names, ""
	// when there is no tag; TagIsAncestor whether TagCommit is an ancestor
	// of Head.
	Head, TagCommit string
	TagIsAncestor   bool
}

// Decide returns what the module needs.
func Decide(s State) (Decision, error) {
	d := Decision{Module: s.Module, Version: s.Version}
	if s.Version == "" {
		d.Action = Undeclared
		return d, nil
	}
	d.Tag = s.Module + "/" + s.Version
	switch {
	case s.TagCommit == "":
		d.Action = Create
	case s.TagCommit == s.Head:
		d.Action = Tagged
	case s.TagIsAncestor && s.Version == s.ParentVersion:
		d.Action = Released
	default:
		why := "this commit declares it"
		if !s.TagIsAncestor {
			why = "that commit is not in this history"
		}
		return d, fmt.Errorf("%s: %s names %s, not %s (%s): %w; a released version never moves, so declare the next version in %s/CHANGELOG.md", s.Module, d.Tag, s.TagCommit, s.Head, why, ErrTagElsewhere, s.Module)
	}
	return d, nil
}

// Git runs git in a repository.
type Git struct{ Dir string }

func (g Git) run(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = g.Dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// Commit resolves rev to a commit id.
func (g Git) Commit(rev string) (string, error) {
	return g.run("rev-parse", "--verify", rev+"^{commit}")
}

// TagCommit is the commit tag names, "" when there is no such tag.
func (g Git) TagCommit(tag string) (string, error) {
	if _, err := g.run("rev-parse", "-q", "--verify", "refs/tags/"+tag); err != nil {
		return "", nil
	}
	return g.Commit("refs/tags/" + tag)
}

// versionAt is the changelog's top version of module at rev, "" when the
// file or the commit does not exist (a root commit has no parent).
func (g Git) versionAt(rev, module string) string {
	out, err := g.run("show", rev+":"+module+"/CHANGELOG.md")
	if err != nil {
		return ""
	}
	return apicheck.VersionOf([]byte(out))
}

// Plan decides every module at rev of the repository.
func Plan(g Git, rev string) ([]Decision, error) {
	head, err := g.Commit(rev)
	if err != nil {
		return nil, err
	}
	var out []Decision
	var errs []error
	for _, m := range Modules {
		s := State{Module: m, Head: head, Version: g.versionAt(head, m), ParentVersion: g.versionAt(head+"^1", m)}
		if s.Version != "" {
			if s.TagCommit, err = g.TagCommit(m + "/" + s.Version); err != nil {
				errs = append(errs, err)
				continue
			}
			if s.TagCommit != "" {
				_, err := g.run("merge-base", "--is-ancestor", s.TagCommit, head)
				s.TagIsAncestor = err == nil
			}
		}
		d, err := Decide(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, d)
	}
	return out, errors.Join(errs...)
}

// Apply creates the annotated tags Plan asked for at rev and, when push,
// pushes each to origin; it returns one line per module.
func Apply(g Git, rev string, decisions []Decision, push bool) ([]string, error) {
	var lines []string
	for _, d := range decisions {
		switch d.Action {
		case Undeclared:
			lines = append(lines, fmt.Sprintf("%s: CHANGELOG.md declares no version; nothing to tag", d.Module))
		case Tagged:
			lines = append(lines, fmt.Sprintf("%s: %s already tags this commit", d.Module, d.Tag))
		case Released:
			lines = append(lines, fmt.Sprintf("%s: %s was released at an earlier commit; the changelog declares no new version", d.Module, d.Tag))
		case Create:
			if _, err := g.run("tag", "-a", d.Tag, "-m", fmt.Sprintf("%s %s", d.Module, d.Version), rev); err != nil {
				return lines, err
			}
			if push {
				if _, err := g.run("push", "origin", "refs/tags/"+d.Tag); err != nil {
					return lines, err
				}
			}
			lines = append(lines, fmt.Sprintf("%s: tagged %s", d.Module, d.Tag))
		}
	}
	return lines, nil
}
