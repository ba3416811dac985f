package main_test

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
)

// TestSmoke is make smoke LOCAL=… against one started runner: the smoke
// tool, built and run as make runs it, passes every check of every
// service with a token minted as make token mints it; then, with two
// services' base URLs pointing where nothing serves them, it exits 1 and
// names the failed check of each (and only those).
func TestSmoke(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the runner")
	}
	dir := filepath.Dir(testenv.Template(t, "dev", "itsm"))
	bin := filepath.Join(t.TempDir(), "smoke")
	if out, err := exec.Command("go", "build", "-o", bin, "../smoke").CombinedOutput(); err != nil {
		t.Fatalf("go build smoke: %v\n%s", err, out)
	}
	r := start(t, dir)
	tok, err := exec.Command(build(t), "token", "-tenant", "smoke", "-user", "smoke-user", "-templates", dir).Output()
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	smoke := func(t *testing.T, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-local", r.base, "-stak-token", strings.TrimSpace(string(tok)), "-wait", "20s"}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return out.String(), cmd.ProcessState.ExitCode()
	}

	t.Run("passes", func(t *testing.T) {
		out, code := smoke(t)
		if code != 0 || !strings.Contains(out, "smoke: all ") {
			t.Fatalf("exit %d, want 0 with every check passed:\n%s", code, out)
		}
		for _, svc := range []string{"itsm", "rezagent", "nucleus", "stak", "agenticpm"} {
			if !strings.Contains(out, "ok   "+svc+": ") {
				t.Errorf("no check of %s passed:\n%s", svc, out)
			}
		}
		for _, want := range []string{"ok   nucleus: delete schedule", "ok   itsm: status to closed", "ok   agenticpm: archive project", "ok   rezagent: pipeline delivers", "ok   stak: user stats"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if testing.Verbose() {
			t.Log(out)
		}
	})
	t.Run("names failed checks", func(t *testing.T) {
		out, code := smoke(t, "-url", "stak="+r.base+"/nostak", "-url", "nucleus="+r.base+"/nucleus/nowhere")
		if code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", code, out)
		}
		summary := out[strings.LastIndex(out, "smoke: "):]
		for _, want := range []string{"2 of ", "nucleus: create schedule", "stak: tenant settings"} {
			if !strings.Contains(summary, want) {
				t.Errorf("summary does not name %q:\n%s", want, out)
			}
		}
		if testing.Verbose() {
			t.Log(out)
		}
		for _, svc := range []string{"itsm", "rezagent", "agenticpm"} {
			if strings.Contains(out, "FAIL "+svc) {
				t.Errorf("%s failed with its own URL:\n%s", svc, out)
			}
		}
	})
}
