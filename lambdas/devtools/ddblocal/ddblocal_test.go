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

// TestOnFreePort: a process that exits before it is ready (its port taken
// in between) is started again on another port, at most three times; a
// failure of another kind is not retried.
func TestOnFreePort(t *testing.T) {
	errExit, errSlow := errors.New("exited: address in use"), errors.New("not ready in time")
	tests := []struct {
		name    string
		results []error // per call; exited is true for errExit
		calls   int
		err     error
	}{
		{"ready at once", []error{nil}, 1, nil},
		{"port taken twice, then ready", []error{errExit, errExit, nil}, 3, nil},
		{"port taken three times", []error{errExit, errExit, errExit, nil}, 3, errExit},
		{"not ready, still running: not retried", []error{errSlow, nil}, 1, errSlow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			port, err := ddblocal.OnFreePort(func(port int) (int, bool, error) {
				err := tt.results[calls]
				calls++
				if port <= 0 {
					t.Errorf("port %d", port)
				}
				if err != nil {
					return 0, err == errExit, err
				}
				return port, false, nil
			})
			if calls != tt.calls || !errors.Is(err, tt.err) || (err == nil) != (port > 0) {
				t.Errorf("%d calls, port %d, err %v; want %d calls, err %v", calls, port, err, tt.calls, tt.err)
			}
		})
	}
}
