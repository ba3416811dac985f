// Package repo locates the monorepo from anywhere inside it, so tests and
// the local runner find node_modules and CDK output without relative-path
// guesswork.
package repo

import (
	"errors"
	"fmt"
	"io/fs"
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

// Inputs reads every file under dir (skipping .git, node_modules, cdk.out,
// bin and .dev) and returns how many. A test calls it for the files a
// process it starts will read — make, the CDK CLI, go build or list, the
// runner — because Go's test cache keys a result on the files the test
// process itself opened: read here, a change to any of them runs the test
// again instead of replaying a result of other inputs.
func Inputs(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "cdk.out", "bin", ".dev":
				if path != dir {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		f.Close()
		n++
		return nil
	})
	return n, err
}
