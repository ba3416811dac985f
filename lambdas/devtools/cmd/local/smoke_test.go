package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSmoke is make smoke LOCAL=… against one started runner: the smoke
// tool, built and run as make runs it, passes every check of every
// service with a token minted as make token mints it (and passed as make
// passes it, in STAK_TOKEN); then, with two services' base URLs pointing
// where nothing serves them, it exits 1 and names the failed check of
// each (and only those).
func TestSmoke(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the runner")
	}
	dir := filepath.Dir(testenv.Template(t, "dev", "itsm"))
	bin := filepath.Join(t.TempDir(), "smoke")
	out, err := exec.Command("go", "build", "-o", bin, "../smoke").CombinedOutput()
	require.NoError(t, err, "go build smoke:\n%s", out)
	r := start(t, dir)
	tok, err := exec.Command(build(t), "token", "-tenant", "smoke", "-user", "smoke-user", "-templates", dir).Output()
	require.NoError(t, err, "token")
	smoke := func(t *testing.T, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-local", r.base, "-wait", "20s"}, args...)...)
		// As make smoke passes it: in the environment, never in argv.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "STAK_TOKEN=") && !strings.HasPrefix(kv, "STAK_TOKEN_FILE=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "STAK_TOKEN="+strings.TrimSpace(string(tok)))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil {
			require.ErrorAs(t, err, &exit)
		}
		return out.String(), cmd.ProcessState.ExitCode()
	}

	t.Run("passes", func(t *testing.T) {
		out, code := smoke(t)
		require.Equal(t, 0, code, "exit, want 0 with every check passed:\n%s", out)
		require.Contains(t, out, "smoke: all ", "want every check passed")
		for _, svc := range []string{"itsm", "rezagent", "nucleus", "stak", "agenticpm"} {
			assert.Contains(t, out, "ok   "+svc+": ", "no check of %s passed", svc)
		}
		for _, want := range []string{"ok   nucleus: delete schedule", "ok   itsm: status to closed", "ok   agenticpm: archive project", "ok   rezagent: pipeline delivers", "ok   stak: user stats"} {
			assert.Contains(t, out, want, "output")
		}
		if testing.Verbose() {
			t.Log(out)
		}
	})
	t.Run("names failed checks", func(t *testing.T) {
		out, code := smoke(t, "-url", "stak="+r.base+"/nostak", "-url", "nucleus="+r.base+"/nucleus/nowhere")
		require.Equal(t, 1, code, "exit:\n%s", out)
		summary := out[strings.LastIndex(out, "smoke: "):]
		for _, want := range []string{"2 of ", "nucleus: create schedule", "stak: tenant settings"} {
			assert.Contains(t, summary, want, "summary does not name %q:\n%s", want, out)
		}
		if testing.Verbose() {
			t.Log(out)
		}
		for _, svc := range []string{"itsm", "rezagent", "agenticpm"} {
			assert.NotContains(t, out, "FAIL "+svc, "%s failed with its own URL", svc)
		}
	})
}
