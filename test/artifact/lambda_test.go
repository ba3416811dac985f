package artifact

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
)

// Mode is how the bootstraps run here.
type Mode int

const (
	// Native: the host is arm64 and runs the deployed binary itself.
	Native Mode = iota
	// QEMU: the deployed arm64 binary under qemu-aarch64-static.
	QEMU
	// HostBuild: no way to run arm64 here, so each bootstrap's package is
	// rebuilt for the host with the build settings recorded in the
	// deployed binary (same tags, flags and module).
	HostBuild
)

// QEMUBinary is the user-mode emulator of Debian's qemu-user-static.
const QEMUBinary = "qemu-aarch64-static"

func (m Mode) String() string {
	switch m {
	case Native:
		return "arm64 bootstraps run natively"
	case QEMU:
		return "arm64 bootstraps under " + QEMUBinary
	default:
		return fmt.Sprintf("no %s: each bootstrap rebuilt for %s/%s with its recorded build settings", QEMUBinary, runtime.GOOS, runtime.GOARCH)
	}
}

func detectMode() (Mode, string) {
	if runtime.GOARCH == "arm64" {
		return Native, ""
	}
	if os.Getenv("ARTIFACT_NO_QEMU") == "" {
		if p, err := exec.LookPath(QEMUBinary); err == nil {
			return QEMU, p
		}
	}
	return HostBuild, ""
}

// Build settings every deployed bootstrap must carry (docs/functions.md,
// "build"). The build info of a -trimpath build leaves out -ldflags, so
// "-s -w" is checked on the ELF sections instead.
var wantSettings = map[string]string{
	"-tags":       "lambda.norpc",
	"-trimpath":   "true",
	"CGO_ENABLED": "0",
	"GOARCH":      "arm64",
	"GOOS":        "linux",
}

// ldflags of the documented build.
const ldflags = "-s -w"

// checkBootstrap reads what the deployed binary says about itself: an
// arm64 ELF, built with the documented settings; it returns its main
// package and settings.
func checkBootstrap(path string) (*buildinfo.BuildInfo, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not an ELF binary: %w", path, err)
	}
	machine := f.Machine
	var unstripped []string
	for _, sec := range f.Sections {
		if sec.Name == ".symtab" || strings.HasPrefix(sec.Name, ".debug_") || strings.HasPrefix(sec.Name, ".zdebug_") {
			unstripped = append(unstripped, sec.Name)
		}
	}
	f.Close()
	if machine != elf.EM_AARCH64 {
		return nil, fmt.Errorf("%s is %v, want arm64", path, machine)
	}
	if len(unstripped) > 0 {
		return nil, fmt.Errorf("%s has %v: not built with -ldflags %q", path, unstripped, ldflags)
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, err
	}
	got := map[string]string{}
	for _, s := range bi.Settings {
		got[s.Key] = s.Value
	}
	for k, v := range wantSettings {
		if got[k] != v {
			return bi, fmt.Errorf("%s (%s) was built with %s=%q, want %q", path, bi.Path, k, got[k], v)
		}
	}
	return bi, nil
}

// hostBuild rebuilds the main package of a deployed bootstrap for the host,
// with its recorded settings except the architecture, from the module in
// the repository.
func hostBuild(root, dir string, bi *buildinfo.BuildInfo) (string, error) {
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	modDir := filepath.Join(root, strings.TrimPrefix(bi.Main.Path, "github.com/dynastack/dynastack/"))
	out := filepath.Join(dir, filepath.Base(bi.Path))
	args := []string{"build", "-tags", set["-tags"], "-ldflags", ldflags, "-buildvcs=false", "-o", out}
	if set["-trimpath"] == "true" {
		args = append(args, "-trimpath")
	}
	cmd := exec.Command("go", append(args, bi.Path)...)
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+runtime.GOARCH, "CGO_ENABLED="+set["CGO_ENABLED"], "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("host build of %s: %v\n%s", bi.Path, err, b)
	}
	return out, nil
}

// Function is one function of the synthesized stage with what it needs to
// run: its bootstrap (the deployed asset) and the environment Lambda gives
// it.
type Function struct {
	LogicalID, Service string
	Bootstrap          string // the asset file cdk deploy uploads
	Run                string // what runs: Bootstrap, or its host build
	Env                map[string]string
	MemoryMB, Timeout  int
	Main               string // main package, from the build info
	Template           string // the template that defines it
}

// Lambda is a function running under the Runtime Interface Emulator.
type Lambda struct {
	fn     *Function
	cmd    *exec.Cmd
	url    string
	api    *runtimeAPI
	logs   *lineBuffer
	done   chan struct{}
	waited error
}

// runtimeAPI stands between the bootstrap and the emulator's runtime API,
// passing every request and answer through, and adds the one thing of
// Lambda's runtime API the emulator leaves out: the invocation's trace
// header on the answer to GET …/runtime/invocation/next
// (Lambda-Runtime-Trace-Id), which aws-lambda-go puts in the invocation's
// context and in _X_AMZN_TRACE_ID.
//
// Why: aws-lambda-rie (the module's internal/lambda/rie/handlers.go)
// reads an invoke's X-Amzn-Trace-Id into the invoke, but the runtime's
// answer takes its trace header from the sandbox tracer, and the
// emulator's is telemetry.NoOpTracer, whose BuildTracingHeader reads
// context values its invoke path never sets: the runtime gets none. Its
// other mode (AWS_LAMBDA_MAX_CONCURRENCY set, Lambda Managed Instances)
// passes the header through but runs a ZIP function only from
// /var/runtime, /var/task or /opt, not a bootstrap given on its command
// line. So the test keeps the invoke's header per invocation id (the
// emulator takes the invoke's X-Amzn-RequestId as the id it gives the
// runtime) and this adds it, as Lambda does.
type runtimeAPI struct {
	srv    *httptest.Server
	target *url.URL // the emulator's runtime API, set by forward
	mu     sync.Mutex
	traces map[string]string // invocation id → trace header
}

// newRuntimeAPI listens before the emulator's ports are chosen, so that
// the kernel cannot hand the proxy a port just picked for the emulator
// (the emulator would then fail to bind, and the invoke reach the proxy).
func newRuntimeAPI(t *testing.T) *runtimeAPI {
	a := &runtimeAPI{traces: map[string]string{}, target: &url.URL{Scheme: "http"}}
	proxy := httputil.NewSingleHostReverseProxy(a.target)
	proxy.FlushInterval = -1
	// The runtime's long poll of …/next is cut when the emulator stops:
	// not worth a line. Anything else answers 502, which the runtime
	// reports as its error.
	proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		if !errors.Is(err, context.Canceled) {
			w.WriteHeader(http.StatusBadGateway)
		}
	}
	proxy.ModifyResponse = func(resp *http.Response) error {
		if strings.HasSuffix(resp.Request.URL.Path, "/runtime/invocation/next") {
			a.mu.Lock()
			h := a.traces[resp.Header.Get("Lambda-Runtime-Aws-Request-Id")]
			a.mu.Unlock()
			if h != "" {
				resp.Header.Set("Lambda-Runtime-Trace-Id", h)
			}
		}
		return nil
	}
	a.srv = httptest.NewServer(proxy)
	t.Cleanup(a.srv.Close)
	return a
}

// forward points the proxy at the emulator's runtime API, before the
// emulator starts.
func (a *runtimeAPI) forward(emulator string) { a.target.Host = emulator }

// trace registers the trace header of the invocation id.
func (a *runtimeAPI) trace(id, header string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.traces[id] = header
}

// InvokeURL is the RIE's invoke endpoint, the path of Lambda's Invoke API.
const invokePath = "/2015-03-31/functions/function/invocations"

// Start runs fn under rie (the aws-lambda-rie binary) with its
// environment and nothing else of the host's, as Lambda would.
func Start(t *testing.T, rie, qemu string, fn *Function) *Lambda {
	t.Helper()
	api := newRuntimeAPI(t)
	// Two ports for the emulator, distinct (a port just freed may be
	// handed out again).
	apiPort, err := ddblocal.FreePort()
	require.NoError(t, err)
	emuPort := apiPort
	for emuPort == apiPort {
		emuPort, err = ddblocal.FreePort()
		require.NoError(t, err)
	}
	args := []string{
		"--runtime-api-address", "127.0.0.1:" + strconv.Itoa(apiPort),
		"--runtime-interface-emulator-address", "127.0.0.1:" + strconv.Itoa(emuPort),
		"--log-level", "error",
	}
	// The bootstrap talks to the runtime API through api (env sets the
	// variable over the emulator's own value).
	api.forward("127.0.0.1:" + strconv.Itoa(apiPort))
	args = append(args, "/usr/bin/env", "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(api.srv.URL, "http://"))
	if qemu != "" {
		args = append(args, qemu, fn.Run)
	} else {
		args = append(args, fn.Run)
	}
	cmd := exec.Command(rie, args...)
	cmd.Dir = filepath.Dir(fn.Bootstrap)
	env := []string{
		"AWS_REGION=us-east-1", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_LAMBDA_FUNCTION_NAME=" + fn.LogicalID,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(fn.MemoryMB),
		"AWS_LAMBDA_FUNCTION_TIMEOUT=" + strconv.Itoa(fn.Timeout),
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"TZ=:UTC",
	}
	for k, v := range fn.Env {
		env = append(env, k+"="+v)
	}
	cmd.Env = env
	logs := &lineBuffer{}
	cmd.Stdout = logs
	cmd.Stderr = logs
	require.NoError(t, cmd.Start(), "start %s", rie)
	l := &Lambda{fn: fn, cmd: cmd, url: "http://127.0.0.1:" + strconv.Itoa(emuPort) + invokePath, api: api, logs: logs, done: make(chan struct{})}
	go func() { l.waited = cmd.Wait(); close(l.done) }()
	t.Cleanup(l.stop)
	// A poll rather than Eventually: it stops at once when the emulator
	// exits, and prints the logs as they are when it gives up.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(emuPort), time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-l.done:
			require.FailNowf(t, "emulator exited", "%s exited before listening: %v\n%s", fn.LogicalID, l.waited, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			require.FailNowf(t, "emulator not listening", "%s: emulator not listening after 20s\n%s", fn.LogicalID, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return l
}

func (l *Lambda) stop() {
	select {
	case <-l.done:
		return
	default:
	}
	_ = l.cmd.Process.Signal(os.Interrupt)
	select {
	case <-l.done:
	case <-time.After(5 * time.Second):
		_ = l.cmd.Process.Kill()
		<-l.done
	}
}

// Invoke sends one event (JSON) and returns the emulator's status and
// the function's answer.
func (l *Lambda) Invoke(t *testing.T, event any) (int, []byte) {
	t.Helper()
	return l.InvokeTraced(t, event, "")
}

// InvokeTraced is Invoke of an invocation whose trace header is trace (""
// none), as Lambda's Invoke API takes it in X-Amzn-Trace-Id (an SQS event
// source mapping passes the message's so).
func (l *Lambda) InvokeTraced(t *testing.T, event any, trace string) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(event)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(l.fn.Timeout+20)*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(b))
	require.NoError(t, err)
	if trace != "" {
		id := fmt.Sprintf("%08x-7000-4000-8000-%012x", invocations.Add(1), time.Now().UnixNano()&0xffffffffffff)
		l.api.trace(id, trace)
		req.Header.Set("X-Amzn-RequestId", id)
		req.Header.Set("X-Amzn-Trace-Id", trace)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "invoke %s\n%s", l.fn.LogicalID, l.logs.String())
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// invocations numbers the invocation ids the tests choose.
var invocations atomic.Int64

// Records returns the JSON log lines the function wrote so far, each
// with its raw text (to count keys, which a map cannot).
func (l *Lambda) Records() []LogRecord {
	var out []LogRecord
	for _, line := range l.logs.Lines() {
		if !strings.HasPrefix(line, "{") {
			continue // the emulator's START/END/REPORT lines
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, LogRecord{Raw: line, Fields: m})
		}
	}
	return out
}

// WaitRecord returns the first JSON log line for which match is true,
// waiting for it: the function's output reaches the test through the
// emulator's pipe, after the answer to the invocation.
func (l *Lambda) WaitRecord(t *testing.T, what string, match func(LogRecord) bool) LogRecord {
	t.Helper()
	var found LogRecord
	seen := func() bool {
		for _, r := range l.Records() {
			if match(r) {
				found = r
				return true
			}
		}
		return false
	}
	// The logs are printed as they are when the wait gives up.
	if !seen() && !assert.Eventually(t, seen, 10*time.Second, 20*time.Millisecond, "%s: no log line with %s after 10s", l.fn.LogicalID, what) {
		require.FailNow(t, "logs of "+l.fn.LogicalID, l.logs.String())
	}
	return found
}

// LogRecord is one JSON log line of a function.
type LogRecord struct {
	Raw    string
	Fields map[string]any
}

// lineBuffer collects a process's output; safe for the copying goroutines
// of exec and the test reading it.
type lineBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lineBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lineBuffer) Lines() []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
