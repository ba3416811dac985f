// Package repo locates the monorepo from anywhere inside it, so tests and
// the local runner find node_modules and CDK output without relative-path
// guesswork.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotFound: no repository root above the start directory.
var ErrNotFound = errors.New("repo: root not found (no go.work in any parent directory)")

// Root walks up from dir (the working directory when empty) to the first
// directory holding go.work, the marker of the monorepo root.
func Root(dir string) (string, error) {
	DependOnTree()
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%w: started at %s", ErrNotFound, dir)
		}
	}
}

// EnvTreeHash is the variable in which make test passes a hash of the
// repository's files (tracked and untracked, not ignored) and of the Go and
// Node versions. Go's test cache keys a result on the variables a test
// reads but only on the files it reads inside its own module, and these
// modules read each other's (golden templates, cdk.json, docs, the
// Makefile, the synthesized assembly), in other processes too (make, the
// CDK CLI, go list, the runner). So a test that finds the repository
// through Root reads this variable, and its cached result holds for the
// same tree only. (constructs/cdktest and infra/config read it the same
// way; DEVELOPERS.md, "The test cache".)
const EnvTreeHash = "DYNASTACK_TREE_HASH"

// DependOnTree makes the calling test's cached result depend on the whole
// tree (EnvTreeHash). Root calls it. It must run in a test, not in
// TestMain or an init: Go records what the tests read, from the first
// test on.
func DependOnTree() { _ = os.Getenv(EnvTreeHash) }
