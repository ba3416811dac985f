// Package delivery checks the make targets that deliver to real accounts
// (deploy, drift) without any: what they run, and what they refuse.
package delivery

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// makeIn runs make in the repository with no AWS credentials in the
// environment (and none of an outer make's variables), returning its
// combined output and exit code.
func makeIn(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return makeWith(t, nil, args...)
}

// makeWith is makeIn with env added to the environment.
func makeWith(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	repo.DependOnTree()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	cmd := exec.Command("make", append([]string{"-s", "--no-print-directory"}, args...)...)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_") || slices.Contains([]string{"MAKEFLAGS", "MAKELEVEL", "MFLAGS"}, k) {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return string(out), code
}

// recipeLines drops make's own "make: *** … Error" line.
func recipeLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "make: ") && l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestDriftWithoutCredentials: make drift says in one line that it needs
// AWS credentials and exits 2, before any synth or CLI call.
func TestDriftWithoutCredentials(t *testing.T) {
	out, code := makeIn(t, "drift", "STAGE=dev")
	assert.Equal(t, 2, code, "exit code; output:\n%s", out)
	lines := recipeLines(out)
	require.Len(t, lines, 1, "one line; output:\n%s", out)
	assert.True(t, strings.HasPrefix(lines[0], "drift: no AWS credentials"), "the line says why: %q", lines[0])

	out, code = makeIn(t, "drift", "STAGE=qa")
	assert.Equal(t, 2, code, "an unknown stage")
	assert.Contains(t, out, "drift: unknown stage 'qa'; valid stages: dev prod stage")
}

// TestDriftChecksTheStacksAtHome: with credentials, make drift hands the
// CLI the stacks of the stage in its own account (infra/cmd/driftplan), or
// the one SERVICE names, each run into its own output file. The CLI here
// is echo, so nothing is checked, and the report says its input names no
// stack.
func TestDriftChecksTheStacksAtHome(t *testing.T) {
	creds := []string{"AWS_ACCESS_KEY_ID=AKIDEXAMPLE"}
	for _, tt := range []struct {
		args []string
		cli  string
	}{
		{[]string{"STAGE=dev"}, "cdk drift dev/rezagent dev/nucleus dev/stak dev/itsm dev/agenticpm\n"},
		{[]string{"STAGE=prod", "SERVICE=itsm"}, "cdk drift prod/itsm\n"},
	} {
		out, code := makeWith(t, creds, append([]string{"drift", "CDK=echo cdk"}, tt.args...)...)
		assert.Equal(t, 2, code, "%v: exit code; output:\n%s", tt.args, out)
		assert.Contains(t, out, tt.cli, "%v: the CLI's arguments", tt.args)
		assert.Contains(t, out, "drift: the cdk drift output names no stack", "%v: the report read the CLI's output", tt.args)
	}
}

// TestDeployOneService: make deploy SERVICE=itsm deploys that stack only
// (-e: nothing else bundled), with the stage's preflight; without SERVICE
// the whole stage; a service that does not exist is refused.
func TestDeployOneService(t *testing.T) {
	out, code := makeIn(t, "-n", "deploy", "STAGE=prod", "SERVICE=itsm")
	require.Equal(t, 0, code, "make -n: %s", out)
	assert.Contains(t, out, "deploy -c dynastack:deploy=prod --output cdk.out --require-approval broadening -e 'prod/itsm'")
	out, code = makeIn(t, "-n", "deploy", "STAGE=prod")
	require.Equal(t, 0, code, "make -n: %s", out)
	assert.Contains(t, out, "deploy -c dynastack:deploy=prod --output cdk.out --require-approval broadening 'prod/*'")
	out, code = makeIn(t, "deploy", "STAGE=prod", "SERVICE=tickets")
	assert.Equal(t, 2, code, "an unknown service: %s", out)
	assert.Contains(t, out, "deploy: SERVICE='tickets' is no service; one of: agenticpm itsm nucleus rezagent stak")
}
