package ddblocal_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFindJar(t *testing.T) {
	root, err := repo.Root("")
	require.NoError(t, err)
	jar, lib, err := ddblocal.FindJar(root)
	require.NoError(t, err)
	for _, p := range []string{jar, lib} {
		_, err := os.Stat(p)
		assert.NoError(t, err)
	}
	assert.Equal(t, "DynamoDBLocal_lib", filepath.Base(lib), "lib dir %s", lib)
	_, _, err = ddblocal.FindJar(t.TempDir())
	assert.ErrorIs(t, err, ddblocal.ErrNoJar, "empty root")
	assert.Contains(t, ddblocal.ErrNoJar.Error(), "npm ci", "error does not say how to fix")
}

func TestRepoRoot(t *testing.T) {
	_, err := repo.Root(t.TempDir())
	assert.ErrorIs(t, err, repo.ErrNotFound, "Root outside repo")
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
				assert.Positive(t, port, "port")
				if err != nil {
					return 0, err == errExit, err
				}
				return port, false, nil
			})
			assert.Equal(t, tt.calls, calls, "calls")
			if tt.err == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.err)
			}
			assert.Equal(t, err == nil, port > 0, "a port exactly when no error: port %d, err %v", port, err)
		})
	}
}
