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
