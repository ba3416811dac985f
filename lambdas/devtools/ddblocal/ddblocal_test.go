package ddblocal_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
)

func TestFindJar(t *testing.T) {
	root, err := repo.Root("")
	if err != nil {
		t.Fatal(err)
	}
	jar, lib, err := ddblocal.FindJar(root)
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, p := range []string{jar, lib} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if filepath.Base(lib) != "DynamoDBLocal_lib" {
		t.Errorf("lib dir %s", lib)
	}
	if _, _, err := ddblocal.FindJar(t.TempDir()); !errors.Is(err, ddblocal.ErrNoJar) {
		t.Errorf("empty root: %v", err)
	}
	if got := ddblocal.ErrNoJar.Error(); !strings.Contains(got, "npm ci") {
		t.Errorf("error does not say how to fix: %s", got)
	}
}

func TestRepoRoot(t *testing.T) {
	if _, err := repo.Root(t.TempDir()); !errors.Is(err, repo.ErrNotFound) {
		t.Errorf("Root outside repo: %v", err)
	}
}
