package test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeployRefusesPlaceholders: `make deploy STAGE=prod`, and a bare `cdk
// deploy` of stage, stop in the app with one line per placeholder setting
// (infra/config.Stage.DeployProblems) before the CLI calls CloudFormation:
// every AWS endpoint points at a recorder here, with credentials the CLI
// would use.
func TestDeployRefusesPlaceholders(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	credential := regexp.MustCompile(`Credential=[^/]+/[^/]+/[^/]+/([^/]+)/aws4_request`)
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		svc := "unsigned"
		if m := credential.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
			svc = m[1]
		}
		mu.Lock()
		calls = append(calls, svc)
		mu.Unlock()
		http.Error(w, "recorder", http.StatusInternalServerError)
	}))
	defer rec.Close()
	dir := root(t)
	env := []string{"PATH=" + filepath.Join(dir, "node_modules", ".bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"AWS_ENDPOINT_URL=" + rec.URL, "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true", "CDK_DISABLE_CLI_TELEMETRY=true"}
	for _, tt := range []struct {
		name  string
		argv  []string
		stage string
	}{
		// Each into an assembly directory of its own: the CLI locks its
		// output while it synthesizes, and make test's dev synth (into
		// cdk.out) runs beside this test.
		{"make deploy STAGE=prod", []string{"make", "-s", "deploy", "STAGE=prod", "CDK_OUT=" + assemblyDir(t)}, "prod"},
		{"bare cdk deploy of stage", []string{"node_modules/.bin/cdk", "deploy", "--output", assemblyDir(t), "--require-approval", "never", "stage/*"}, "stage"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(tt.argv[0], tt.argv[1:]...)
			cmd.Dir = dir
			for _, kv := range os.Environ() {
				k, _, _ := strings.Cut(kv, "=")
				if !strings.HasPrefix(k, "AWS_") && !slices.Contains([]string{"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "PATH", "CDK_VALIDATION"}, k) {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.Env = append(cmd.Env, env...)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "%s succeeded with placeholder settings:\n%s", tt.name, out)
			var lines []string
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "stage "+tt.stage+": ") {
					lines = append(lines, l)
				}
			}
			assert.Len(t, lines, 7, "placeholder lines (account, region, issuer, audience, alarm email, ntfy server, ntfy token):\n%s", out)
			assert.Contains(t, string(out), "dynastack: deploy refused, settings still placeholders or missing")
			for _, l := range lines {
				assert.Contains(t, l, "in infra/config/config.go (Stages(), stage "+tt.stage, "line does not say where to set it")
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	assert.NotContains(t, calls, "cloudformation", "the CLI called CloudFormation before the refusal")

	t.Logf("AWS calls before the refusal: %v", calls)
}

// assemblyDir is a directory for one deploy's assembly. Not t.TempDir: the
// app's bundling may still be writing into it when the refused deploy
// returns, and t.TempDir fails the test when its removal finds files
// appearing; this one is removed on a best-effort basis.
func assemblyDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "dynastack-deploy-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}
