package config

import (
	"errors"
	"os"
	"path/filepath"
)

// RepoRoot is the folder holding go.work, found from the working directory
// (the CLI runs the app at the repository root, tests run in their package
// directory).
func RepoRoot() (string, error) {
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
