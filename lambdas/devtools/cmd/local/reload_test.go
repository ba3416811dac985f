package main_test

import (
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	itsm "github.com/dynastack/dynastack/constructs/itsm/contract"
	itsmclient "github.com/dynastack/dynastack/lambdas/client/itsm"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyTree copies what the runner is built from (the constructs and
// lambdas modules) into a workspace of its own, for a test to edit.
func copyTree(t *testing.T) string {
	t.Helper()
	root, err := repo.Root("")
	require.NoError(t, err)
	dst := t.TempDir()
	for _, mod := range []string{"constructs", "lambdas"} {
		err := filepath.WalkDir(filepath.Join(root, mod), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if d.IsDir() {
				if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			if fi, err := d.Info(); err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
				return err // built binaries left in the tree are not sources
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		require.NoError(t, err)
	}
	work := "go 1.26.0\n\nuse (\n\t./constructs\n\t./lambdas\n)\n"
	require.NoError(t, os.WriteFile(filepath.Join(dst, "go.work"), []byte(work), 0o644))
	if b, err := os.ReadFile(filepath.Join(root, "go.work.sum")); err == nil {
		_ = os.WriteFile(filepath.Join(dst, "go.work.sum"), b, 0o644)
	}
	return dst
}

// get answers a GET with its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReload: make dev's runner (-reload) rebuilds and restarts the
// functions when a service's code is saved, keeping DynamoDB Local and
// its data; a change that does not build keeps the last good server
// serving and prints the compiler's error.
func TestReload(t *testing.T) {
	t.Parallel()
	src := copyTree(t)
	// Its own DynamoDB Local: the test is that the process survives.
	r := startEnv(t, filepath.Dir(testenv.Template(t, "dev", "itsm")), ownJava, "-reload", "-src", src)
	c, err := itsmclient.NewClientWithResponses(r.base + "/" + itsm.Name)
	require.NoError(t, err)
	created, err := c.CreateTicketWithResponse(t.Context(), nil, itsmclient.CreateTicketJSONRequestBody{
		CallerId: new("sess-reload-user"), IssueDescription: new("kept across reloads")})
	answered(t, 201, created, created.Body, err, "create")
	id, err := uuid.Parse(created.JSON201.TicketId)
	require.NoError(t, err, "ticket_id is a UUID")

	// The change: the name ITSM gives a ticket in its 404 to an id that is
	// no UUID (raw requests: the generated client takes a UUID).
	file := filepath.Join(src, "lambdas", "services", "itsm", "http.go")
	code, err := os.ReadFile(file)
	require.NoError(t, err)
	const from, to = `api.PathUUID(r, contract.ParamID, "ticket")`, `api.PathUUID(r, contract.ParamID, "reloaded ticket")`
	require.Contains(t, string(code), from, "%s no longer holds it: choose another visible change for this test", file)
	_, body := get(t, at(r.base, itsm.Name, itsm.GetTicket, "not-a-uuid"))
	require.NotContains(t, body, "reloaded ticket", "before the change")
	saved := time.Now()
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(code), from, to, 1)), 0o644))
	waitBody(t, at(r.base, itsm.Name, itsm.GetTicket, "not-a-uuid"), 404, "reloaded ticket", 3*time.Minute)
	t.Logf("reload: %s from save to serving the new code", time.Since(saved).Round(time.Millisecond))
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if line, _ := r.stderr.find(0, `"msg":"reloaded"`); line != "" {
			t.Logf("runner: %s", line)
			break
		}
	}

	// Kept: the ticket, and the same DynamoDB Local.
	kept, err := c.GetTicketWithResponse(t.Context(), id)
	answered(t, 200, kept, kept.Body, err, "ticket after the reload")
	assert.Equal(t, "kept across reloads", kept.JSON200.IssueDescription, "ticket after the reload")
	assert.True(t, alive(r.javaPID), "DynamoDB Local (pid %d) did not survive the reload", r.javaPID)

	// A broken build: the compiler's error is printed, the last good
	// server keeps serving.
	_, after := r.stderr.find(0, `"msg":"reloaded"`)
	broken := filepath.Join(src, "lambdas", "services", "itsm", "zz_broken.go")
	require.NoError(t, os.WriteFile(broken, []byte("package itsm\n\nfunc broken( {\n"), 0o644))
	require.Eventually(t, func() bool {
		line, _ := r.stderr.find(after, "build failed", "zz_broken.go:3")
		return line != ""
	}, 3*time.Minute, 100*time.Millisecond, "no build failure naming zz_broken.go:3 printed in 3 minutes")
	status, body := get(t, at(r.base, itsm.Name, itsm.GetTicket, "not-a-uuid"))
	assert.Equal(t, 404, status, "after a broken build the last good server must serve: status; body %s", body)
	assert.Contains(t, body, "reloaded ticket", "after a broken build the last good server must serve")
	kept, err = c.GetTicketWithResponse(t.Context(), id)
	answered(t, 200, kept, kept.Body, err, "ticket after a broken build")
	_, n := r.stderr.find(after, `"msg":"reloaded"`)
	assert.Equal(t, after, n, "a broken build restarted the server")

	// Fixed: it reloads again.
	require.NoError(t, os.Remove(broken))
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(code), from, `api.PathUUID(r, "id", "fixed ticket")`, 1)), 0o644))
	waitBody(t, at(r.base, itsm.Name, itsm.GetTicket, "not-a-uuid"), 404, "fixed ticket", 3*time.Minute)
}

// waitBody waits until url answers status with a body holding want.
func waitBody(t *testing.T, url string, status int, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, body := get(t, url)
		if got == status && strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			require.FailNow(t, "no such answer in time", "%s: %d %s after %s, want %d with %q", url, got, body, within, status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
