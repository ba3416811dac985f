package config

import (
	"errors"
	"os"
	"path/filepath"
)

// LambdasDir is the Go module of the Lambda functions, found from the
// working directory (the CLI runs the app at the repository root, tests run
// in their package directory).
func LambdasDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return filepath.Join(dir, "lambdas"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.work not found above the working directory: run the CDK app from the dynastack repository")
		}
		dir = parent
	}
}
