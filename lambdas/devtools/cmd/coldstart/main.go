// Command coldstart reports, per function, what a cold start costs: the
// bootstrap's size and its zip's (what Lambda downloads), and the init
// and first-invoke time under the Runtime Interface Emulator, beside a
// minimal aws-lambda-go function (./floor) built the same way — the
// floor. make bench runs it:
//
//	go run ./devtools/cmd/coldstart -rie ../bin/aws-lambda-rie-… [-runs 21] [-templates ../test/snapshots/dev]
//
// Each bootstrap is built for the host (the deployed arm64 one under qemu
// would time qemu) with the flags of constructs/gofunction (goBuildArgs).
// Each function gets its template environment (tables created in a
// DynamoDB Local, the other AWS services on loopback fakes), so init runs
// its real configuration and the first invoke its real DynamoDB call.
//
// Init is timed as Lambda's Init Duration is: from the invoke that starts
// the runtime process to the runtime's first "next invocation" request,
// seen by a proxy between the bootstrap and the emulator's Runtime API
// (the emulator's own Init Duration is not the process's). The first
// invoke is from handing the event over to the function's answer. Each
// figure is the median of -runs fresh emulators. Beside them, the package
// initialisers' own time (GODEBUG=inittrace=1, least of 15 starts), which
// is what a function's imports decide and moves least with the machine's
// load.
package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/inittrace"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services"
)

// buildArgs are constructs/gofunction's goBuildArgs (that package links
// the CDK, which a dev tool should not): tags, -trimpath, no VCS stamp,
// stripped.
func buildArgs(pkg, out string) []string {
	return []string{"build", "-tags", "lambda.norpc", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", out, pkg}
}

const floorName = "(floor: aws-lambda-go, empty handler)"

func main() {
	rie := flag.String("rie", "", "the aws-lambda-rie binary (make bench passes it)")
	templates := flag.String("templates", "../test/snapshots/dev", "the dev stage's templates: each function's environment")
	runs := flag.Int("runs", 21, "cold starts per function; the median is reported (fewer than about 20 leave the floor's median, and so every ratio, moving by 0.2 or more from run to run)")
	only := flag.String("only", "", "comma-separated function names (default: every function)")
	flag.Parse()
	if err := run(*rie, *templates, *runs, *only); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

// function is one bootstrap to start.
type function struct {
	name, pkg string
	kind      service.Kind
	env       map[string]string
	event     []byte
	bootstrap string
	size, zip int64
	pkgInit   time.Duration
	init      []time.Duration
	invoke    []time.Duration
	status    string // the first invoke's answer, in short
}

func run(rie, templates string, runs int, only string) error {
	if rie == "" {
		return fmt.Errorf("-rie is required: the aws-lambda-rie binary (make bench installs it)")
	}
	rie, _ = filepath.Abs(rie)
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "dynastack-coldstart-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		return err
	}
	defer srv.Close()
	client, err := ddb.NewClient(ctx, ddblocal.WithEndpoint(srv.Endpoint, os.Getenv))
	if err != nil {
		return err
	}
	fakes, err := awsloop.StartAll()
	if err != nil {
		return err
	}
	defer fakes.Close()
	sns, bus := awsloop.NewSNS(), awsloop.NewEvents()
	if err := sns.Start(); err != nil {
		return err
	}
	defer sns.Close()
	if err := bus.Start(); err != nil {
		return err
	}
	defer bus.Close()
	common := fakes.Env()
	common["AWS_ENDPOINT_URL_SNS"], common[awsloop.EndpointEnv("EventBridge")] = sns.URL(), bus.URL()
	common[ddblocal.EnvEndpoint] = srv.Endpoint

	tmpls, err := cfntables.LoadDir(templates)
	if err != nil {
		return err
	}
	var fns []*function
	for _, t := range tmpls {
		names, err := cfntables.Create(ctx, client, t, cfntables.Options{})
		if err != nil {
			return err
		}
		names = t.LocalRefs(names)
		for topic := range t.TopicRefs() {
			sns.AddTopic(cfntables.LocalARN("sns", topic), func(awsloop.Publication) {})
		}
		tfns, err := t.Functions()
		if err != nil {
			return err
		}
		for _, fn := range tfns {
			b, ok := services.Binding(fn.Service())
			if !ok || (only != "" && !slices.Contains(strings.Split(only, ","), b.Function.Name)) {
				continue
			}
			env, err := fn.Environment(names)
			if err != nil {
				return err
			}
			for k, v := range common {
				env[k] = v
			}
			f := &function{name: b.Function.Name, pkg: b.Function.Package(), kind: b.Function.Kind, env: env}
			if f.event, err = firstEvent(b.Function); err != nil {
				return err
			}
			fns = append(fns, f)
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].name < fns[j].name })
	floor := &function{name: floorName, pkg: "./devtools/cmd/coldstart/floor", env: common, event: []byte(`{}`)}
	fns = append([]*function{floor}, fns...)

	for _, f := range fns {
		if err := f.build(tmp); err != nil {
			return err
		}
		if f.pkgInit, err = f.packageInit(initRuns); err != nil {
			return err
		}
	}
	// Round-robin, so a burst of load on the shared machine spreads over
	// every function instead of one.
	for i := range runs {
		for _, f := range fns {
			// A free port can be taken by another process between the
			// look and the emulator's listen: such a start is retried.
			var err error
			for range 3 {
				if err = f.start(rie, i == 0); err == nil {
					break
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
	}
	fmt.Printf("\nCold start under the Runtime Interface Emulator, host build (%s/%s) with the deployed build flags; median of %d starts each:\n\n", runtime.GOOS, runtime.GOARCH, runs)
	fmt.Printf("(package init: the sum of the package initialisers' clock times, GODEBUG=inittrace=1, least of %d starts)\n\n", initRuns)
	fmt.Println("| function | kind | bootstrap MiB | zip MiB | package init ms | init ms | init ÷ floor | first invoke ms | first answer |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	base := median(floor.init)
	for _, f := range fns {
		kind := string(f.kind)
		if f == floor {
			kind = "–"
		}
		fmt.Printf("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f | %s |\n", f.name, kind, mib(f.size), mib(f.zip),
			ms(f.pkgInit), ms(median(f.init)), float64(median(f.init))/float64(base), ms(median(f.invoke)), f.status)
	}
	return nil
}

// initRuns is how many starts packageInit takes the least of.
const initRuns = 15

// packageInit is the least, over n starts of the bootstrap outside the
// emulator, of the sum of its package initialisers' clock times: the part
// of init its imports decide, steadier on a shared machine than the whole
// init. Without the Runtime API's variables the bootstrap exits after its
// initialisers (and its constructor's configuration error).
func (f *function) packageInit(n int) (time.Duration, error) {
	best := time.Duration(-1)
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, f.bootstrap)
		cmd.Env = []string{"GODEBUG=inittrace=1", "PATH=" + os.Getenv("PATH")}
		out, _ := cmd.CombinedOutput()
		cancel()
		inits := inittrace.Parse(out)
		if len(inits) == 0 {
			return 0, fmt.Errorf("%s: no inittrace lines in its output:\n%s", f.name, out)
		}
		if sum := inittrace.Clock(inits); best < 0 || sum < best {
			best = sum
		}
	}
	return best, nil
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// build compiles f's bootstrap for the host and measures it and its zip.
func (f *function) build(tmp string) error {
	dir := filepath.Join(tmp, strings.NewReplacer("(", "", ")", "", " ", "-", ":", "", ",", "").Replace(f.name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f.bootstrap = filepath.Join(dir, "bootstrap")
	cmd := exec.Command("go", buildArgs(f.pkg, f.bootstrap)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", f.pkg, err, out)
	}
	b, err := os.ReadFile(f.bootstrap)
	if err != nil {
		return err
	}
	f.size = int64(len(b))
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "bootstrap", Method: zip.Deflate})
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	f.zip = int64(z.Len())
	return nil
}

// firstEvent is what the first invoke sends: an HTTP function's first GET
// route behind IAM (path parameters filled with a well-formed id, so it
// reads DynamoDB), an empty batch for a stream or queue consumer, a
// schedule's event for a job.
func firstEvent(fn service.Function) ([]byte, error) {
	switch fn.Kind {
	case service.HTTP:
		route := fn.Routes[0]
		for _, r := range slices.Backward(fn.Routes) {
			// A read by id: the route DynamoDB answers without a body or a
			// query to validate first.
			if r.Method == "GET" && r.Auth == service.IAM && (route.Method != "GET" || strings.Contains(r.Path, "{") || !strings.Contains(route.Path, "{")) {
				route = r
			}
		}
		path := route.Path
		for strings.Contains(path, "{") {
			i, j := strings.Index(path, "{"), strings.Index(path, "}")
			path = path[:i] + "00000000-0000-4000-8000-000000000000" + path[j+1:]
		}
		now := time.Now()
		return json.Marshal(events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: "$default", RawPath: path,
			Headers: map[string]string{"content-type": "application/json", "x-user-id": "coldstart@example.com"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				RouteKey: "$default", AccountID: "123456789012", Stage: "$default", RequestID: "coldstart",
				APIID: "abc123", Time: now.UTC().Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
				Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
					IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: "arn:aws:iam::123456789012:role/coldstart"}},
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: route.Method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.9"},
			},
		})
	case service.Schedule:
		return json.Marshal(map[string]any{"schedule_arn": "arn:aws:scheduler:us-east-1:123456789012:schedule/default/coldstart",
			"scheduled_time": time.Now().UTC().Truncate(time.Second), "execution_id": "coldstart", "attempt_number": "1"})
	default:
		return []byte(`{"Records":[]}`), nil
	}
}

// start runs f once under a fresh emulator and records its init and first
// invoke.
func (f *function) start(rie string, first bool) error {
	apiAddr, emuAddr, proxyAddr := freeAddr(), freeAddr(), freeAddr()
	target, _ := url.Parse("http://" + apiAddr)
	var (
		mu                   sync.Mutex
		sent, next, ev, resp time.Time
	)
	rp := httputil.NewSingleHostReverseProxy(target)
	// The emulator is killed after each start, mid long-poll.
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ModifyResponse = func(r *http.Response) error {
		if strings.HasSuffix(r.Request.URL.Path, "/invocation/next") {
			mu.Lock()
			if ev.IsZero() {
				ev = time.Now()
			}
			mu.Unlock()
		}
		return nil
	}
	proxy := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/invocation/next") && next.IsZero():
			next = time.Now()
		case (strings.HasSuffix(r.URL.Path, "/response") || strings.HasSuffix(r.URL.Path, "/error")) && resp.IsZero():
			resp = time.Now()
		}
		mu.Unlock()
		rp.ServeHTTP(w, r)
	}), ErrorLog: nil}
	ln, err := net.Listen("tcp", proxyAddr)
	if err != nil {
		return err
	}
	go proxy.Serve(ln)
	defer proxy.Close()

	// The emulator gives the runtime its own Runtime API address; a
	// wrapper points the bootstrap at the proxy (an exec, the same for
	// every function and the floor).
	wrapper := f.bootstrap + ".sh"
	script := fmt.Sprintf("#!/bin/sh\nAWS_LAMBDA_RUNTIME_API=%s exec %s\n", proxyAddr, f.bootstrap)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return err
	}
	cmd := exec.Command(rie, "--runtime-api-address", apiAddr, "--runtime-interface-emulator-address", emuAddr, "--log-level", "error", wrapper)
	cmd.Dir = filepath.Dir(f.bootstrap)
	cmd.Env = []string{"AWS_REGION=us-east-1", "AWS_DEFAULT_REGION=us-east-1", "AWS_LAMBDA_FUNCTION_NAME=" + f.name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256", "AWS_LAMBDA_FUNCTION_VERSION=$LATEST", "TZ=:UTC"}
	for k, v := range f.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if c, err := net.Dial("tcp", emuAddr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("emulator not listening after 20 s:\n%s", logs.String())
		}
	}
	hc := &http.Client{Timeout: 60 * time.Second}
	mu.Lock()
	sent = time.Now()
	mu.Unlock()
	r, err := hc.Post("http://"+emuAddr+"/2015-03-31/functions/function/invocations", "application/json", bytes.NewReader(f.event))
	if err != nil {
		return fmt.Errorf("invoke: %v\n%s", err, logs.String())
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if next.IsZero() || ev.IsZero() || resp.IsZero() {
		return fmt.Errorf("the runtime did not go through the proxy (next %v, event %v, answer %v):\n%s", next, ev, resp, logs.String())
	}
	f.init = append(f.init, next.Sub(sent))
	f.invoke = append(f.invoke, resp.Sub(ev))
	if first {
		f.status = answer(body)
		slog.Debug("first answer", "function", f.name, "body", string(body))
	}
	return nil
}

// answer is the first invoke's outcome in a few words: an HTTP status,
// a batch's failures, or the answer's size.
func answer(body []byte) string {
	var v struct {
		StatusCode   int               `json:"statusCode"`
		Failures     []json.RawMessage `json:"batchItemFailures"`
		ErrorMessage string            `json:"errorMessage"`
	}
	_ = json.Unmarshal(body, &v)
	switch {
	case v.ErrorMessage != "":
		return "error: " + strings.ReplaceAll(v.ErrorMessage, "|", "/")
	case v.StatusCode != 0:
		return "HTTP " + strconv.Itoa(v.StatusCode)
	case bytes.Contains(body, []byte("batchItemFailures")):
		return fmt.Sprintf("%d batch item failures", len(v.Failures))
	default:
		return fmt.Sprintf("%d bytes", len(body))
	}
}

func freeAddr() string {
	port, err := ddblocal.FreePort()
	if err != nil {
		panic(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}
