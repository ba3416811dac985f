package config

import (
	"errors"
	"os"
	"path/filepath"
)

// EnvTreeHash is the variable in which make test passes a hash of the
// repository's files: Go's test cache keys a result on the variables a
// test reads, but on the files it reads inside its own module only, so a
// test that reads the repository outside the infra module reads this too
// (RepoRoot does), and its cached result holds for the same tree only
// (constructs/cdktest.EnvTreeHash, the same variable for the other
// modules' tests; DEVELOPERS.md, "The test cache").
const EnvTreeHash = "DYNASTACK_TREE_HASH"

// RepoRoot is the folder holding go.work, found from the working directory
// (the CLI runs the app at the repository root, tests run in their package
// directory).
func RepoRoot() (string, error) {
	_ = os.Getenv(EnvTreeHash)
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.work not found above the working directory: run from inside the dynastack repository")
		}
		dir = parent
	}
}

// LambdasDir is the Go module of the Lambda functions.
func LambdasDir() (string, error) {
	root, err := RepoRoot()
	return filepath.Join(root, "lambdas"), err
}
