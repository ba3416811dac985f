package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/constructs/catalog"
	itsm "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/google/uuid"

	itsmclient "github.com/dynastack/dynastack/lambdas/client/itsm"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runner is the local runner binary started by a test.
type runner struct {
	cmd     *exec.Cmd
	base    string
	javaPID int
	exited  chan error
	ready   string // the ready line
	suffix  string // of its table names, in a shared DynamoDB Local
	stderr  *lines // its log
}

// lines collects a process's output lines; safe for concurrent use.
type lines struct {
	mu   sync.Mutex
	text []string
}

func (l *lines) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text = append(l.text, s)
}

// len is how many lines there are.
func (l *lines) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.text)
}

// since are the lines from the from'th on.
func (l *lines) since(from int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.text[min(from, len(l.text)):])
}

// tail is the last n lines.
func (l *lines) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.text[max(0, len(l.text)-n):], "\n")
}

// find returns the first line from the from'th on holding every one of
// subs, and the index after it.
func (l *lines) find(from int, subs ...string) (string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
next:
	for i := from; i < len(l.text); i++ {
		for _, s := range subs {
			if !strings.Contains(l.text[i], s) {
				continue next
			}
		}
		return l.text[i], i + 1
	}
	return "", from
}

var binary struct {
	sync.Mutex
	path string
	err  error
}

func build(t *testing.T) string {
	t.Helper()
	binary.Lock()
	defer binary.Unlock()
	if binary.path == "" && binary.err == nil {
		dir, err := os.MkdirTemp("", "dynastack-local-*")
		require.NoError(t, err)
		binary.path = filepath.Join(dir, "local")
		// -trimpath as the reloading runner builds (reload.go): its
		// builds in a copy of the tree then reuse this one's cache.
		out, err := exec.Command("go", "build", "-trimpath", "-o", binary.path, ".").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	require.NoError(t, binary.err)
	return binary.path
}

func TestMain(m *testing.M) {
	code := testenv.Main(m)
	if binary.path != "" {
		os.RemoveAll(filepath.Dir(binary.path))
	}
	os.Exit(code)
}

// start runs the runner on a template directory and waits for the ready
// line; extra are more flags. The runner's tables, suffixed, are in the
// tests' shared DynamoDB Local (testenv.Endpoint): the runner tests run in
// parallel, and a Java process per runner would cost more than they do.
func start(t *testing.T, templates string, extra ...string) *runner {
	t.Helper()
	return startEnv(t, templates, nil, extra...)
}

// ownJava is the env of a runner that starts its own DynamoDB Local, for
// the tests of how the runner manages that process.
var ownJava = []string{ddblocal.EnvEndpoint + "="}

// startEnv is start with env (KEY=value) set in the runner's environment
// only: the runner tests run in parallel, so none may t.Setenv.
func startEnv(t *testing.T, templates string, env []string, extra ...string) *runner {
	t.Helper()
	suffix := ""
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, ddblocal.EnvEndpoint+"=") }) {
		suffix = testenv.Suffix()
		env = append(env, ddblocal.EnvEndpoint+"="+testenv.Endpoint(t), "LOCAL_TABLE_SUFFIX="+suffix)
		// Registered before the runner's own cleanup, so it runs after the
		// runner is gone: the shared server's TTL sweep walks every table
		// it holds, and other packages' tests wait for that sweep.
		t.Cleanup(func() { dropTables(t, suffix) })
	}
	// The runner reads the templates (outside this module) in its own
	// process: the cached result holds for the same tree only.
	repo.DependOnTree()
	cmd := exec.Command(build(t), append([]string{"-templates", templates}, extra...)...)
	drop := []string{"PORT="}
	for _, kv := range env {
		drop = append(drop, kv[:strings.IndexByte(kv, '=')+1])
	}
	for _, kv := range os.Environ() {
		if !slices.ContainsFunc(drop, func(p string) bool { return strings.HasPrefix(kv, p) }) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// PORT=0: the runner listens on a port the kernel picks and names it
	// in its ready line. A free port looked up here could be taken by a
	// parallel test before the runner listened (seen: "address already in
	// use").
	cmd.Env = append(append(cmd.Env, env...), "PORT=0")
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	require.NoError(t, cmd.Start())
	r := &runner{cmd: cmd, exited: make(chan error, 1), stderr: &lines{}, suffix: suffix}
	// A failed test shows the runner's last log lines (with -v it showed
	// them all as they came): what it did around the failure.
	t.Cleanup(func() {
		if t.Failed() && !testing.Verbose() {
			t.Logf("the runner's last log lines:\n%s", r.stderr.tail(40))
		}
	})
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			r.cmd.Process.Kill()
		}
		if r.javaPID != 0 {
			syscall.Kill(r.javaPID, syscall.SIGKILL)
		}
	})

	pids := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		// A log line longer than the scanner's default 64 KiB would end
		// the reading, and the runner would block on its full pipe.
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			r.stderr.add(sc.Text())
			var rec struct {
				Msg string `json:"msg"`
				PID int    `json:"pid"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "dynamodb local started" {
				pids <- rec.PID
			}
			if testing.Verbose() {
				t.Log(sc.Text())
			}
		}
	}()
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "ready") {
				select { // a reloading runner prints one per reload
				case ready <- sc.Text():
				default:
				}
			}
		}
		r.exited <- cmd.Wait()
	}()
	select {
	case line := <-ready:
		t.Logf("runner: %s", line)
		r.ready = line
		m := readyBase.FindStringSubmatch(line)
		require.NotNil(t, m, "ready line does not name its address: %s", line)
		r.base = m[1]
		assert.Contains(t, line, "itsm="+r.base+"/itsm/", "ready line does not name the itsm URL")
	case err := <-r.exited:
		require.FailNow(t, "runner exited before ready", "%v\n%s", err, r.stderr.tail(10))
	case <-time.After(2 * time.Minute):
		require.FailNow(t, "runner not ready after 2 minutes")
	}
	if slices.Contains(env, ddblocal.EnvEndpoint+"=") {
		r.javaPID = <-pids
	}
	return r
}

// readyBase reads the runner's address from its ready line.
var readyBase = regexp.MustCompile(`ready on (http://127\.0\.0\.1:[0-9]+):`)

// alive reports whether pid runs. A zombie counts as gone: it has exited
// and only waits for a reaper (PID 1 of a container may not be one).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err) && runtime.GOOS != "linux"
	}
	// Format: pid (comm) state …; comm may contain spaces.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	require.Eventually(t, func() bool { return !alive(pid) }, 15*time.Second, 100*time.Millisecond, "%s (pid %d) still running", what, pid)
}

// checkTokens: Stak's end-user routes take only a token of `local token`
// (make token), and only for the path's own tenant and user; publisher
// routes take none locally (SigV4 is not emulated).
func checkTokens(t *testing.T, base, templates string) {
	t.Helper()
	call(t, stakcontract.PutTenant.Method, at(base, stakcontract.Name, stakcontract.PutTenant, "acme"), `{"title":"Acme"}`, 200, nil)
	call(t, stakcontract.PutInbox.Method, at(base, stakcontract.Name, stakcontract.PutInbox, "acme", "main"), `{"title":"Main"}`, 200, nil)
	call(t, stakcontract.Publish.Method, at(base, stakcontract.Name, stakcontract.Publish, "acme", "main"),
		`{"sender":"hr","audiences":{"kind":"users","uids":["u1"]},"message":{"title":"hi"}}`, 201, nil)
	feed := at(base, stakcontract.Name, stakcontract.Feed, "acme", "main", "u1")
	token := func(tenant, user string) string {
		out, err := exec.Command(build(t), "token", "-tenant", tenant, "-user", user, "-templates", templates).Output()
		require.NoError(t, err, "local token")
		return strings.TrimSpace(string(out))
	}
	for _, tt := range []struct {
		name, auth string
		status     int
	}{
		{"no token", "", 401},
		{"not a token", "Bearer abc", 401},
		{"own token", "Bearer " + token("acme", "u1"), 200},
		{"other user", "Bearer " + token("acme", "u2"), 403},
		{"other tenant", "Bearer " + token("globex", "u1"), 403},
	} {
		req, _ := http.NewRequest("GET", feed, nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, tt.status, resp.StatusCode, "%s: status; body %s", tt.name, b)
		if tt.status == 200 {
			assert.Contains(t, string(b), `"title":"hi"`, "%s: feed", tt.name)
		}
	}
}

// at is the runner's URL of route, a route of the contract of service
// (which the runner serves under /<service>), with its path values: for a
// request the generated client cannot send (a body that is not JSON, no
// body at all) and for the runner's own paths.
func at(base, service string, route service.Route, values ...string) string {
	return base + "/" + service + route.URL(values...)
}

// answered requires a generated client's call (lambdas/client/<service>,
// on the runner's /<service> prefix) to have answered want: r is its
// *…Response, body its Body.
func answered(t *testing.T, want int, r interface{ StatusCode() int }, body []byte, err error, what string) {
	t.Helper()
	require.NoError(t, err, what)
	require.Equal(t, want, r.StatusCode(), "%s: status; body %s", what, body)
}

func call(t *testing.T, method, url, body string, wantStatus int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "e2e-"+method)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, wantStatus, resp.StatusCode, "%s %s: status; body %s", method, url, b)
	// Ours, never the client's (which is logged as client_request_id).
	if got := resp.Header.Get("X-Request-Id"); strings.Contains(url, "/itsm/") {
		assert.NotEmpty(t, got, "%s %s: X-Request-Id", method, url)
		assert.NotEqual(t, "e2e-"+method, got, "%s %s: X-Request-Id is the client's", method, url)
	}
	if out != nil {
		require.NoError(t, json.Unmarshal(b, out), "%s", b)
	}
}

// servedServices is what the runner must serve from dir: every registered
// service whose function the templates define, sorted.
func servedServices(t *testing.T, dir string) string {
	t.Helper()
	tmpls, err := cfntables.LoadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, tmpl := range tmpls {
		fns, err := tmpl.Functions()
		require.NoError(t, err)
		for _, fn := range fns {
			// An API of several functions is one service.
			if _, ok := services.Lookup(fn.Service()); ok {
				c, _ := catalog.ServiceOf(fn.Service())
				names = append(names, c.Name)
			}
		}
	}
	sort.Strings(names)
	names = slices.Compact(names)
	return strings.Join(names, ",")
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	r := startEnv(t, filepath.Dir(testenv.Template(t, "dev", "itsm")), ownJava)
	api := at(r.base, itsm.Name, itsm.CreateTicket)

	var health struct {
		Status   string   `json:"status"`
		Services []string `json:"services"`
	}
	call(t, "GET", r.base+"/healthz", "", 200, &health)
	assert.Equal(t, "ok", health.Status, "healthz status")
	assert.Equal(t, servedServices(t, filepath.Dir(testenv.Template(t, "dev", "itsm"))), strings.Join(health.Services, ","), "healthz services")

	// ITSM through its generated client (lambdas/client/itsm), below the
	// runner's /itsm prefix; the X-Request-Id a client sends is not the
	// answer's (call checks it for the raw requests).
	c, err := itsmclient.NewClientWithResponses(r.base+"/"+itsm.Name, itsmclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("X-Request-Id", "e2e-typed")
		return nil
	}))
	require.NoError(t, err)
	caller := "sess-poc-user-001"
	tk, err := c.CreateTicketWithResponse(t.Context(), nil, itsmclient.CreateTicketJSONRequestBody{CallerId: &caller, IssueDescription: new("My laptop won't turn on")})
	answered(t, 201, tk, tk.Body, err, "create")
	assert.NotEqual(t, "e2e-typed", tk.HTTPResponse.Header.Get("X-Request-Id"), "create: X-Request-Id is the client's")
	id, err := uuid.Parse(tk.JSON201.TicketId)
	require.NoError(t, err, "ticket_id is a UUID")
	got, err := c.GetTicketWithResponse(t.Context(), id)
	answered(t, 200, got, got.Body, err, "get")
	assert.Equal(t, tk.JSON201.TicketId, got.JSON200.TicketId, "get: ticket id")
	assert.Equal(t, "open", got.JSON200.Status, "get: status")
	commented, err := c.AddCommentWithResponse(t.Context(), id, itsmclient.AddCommentJSONRequestBody{CommentText: new("Tried restarting")})
	answered(t, 201, commented, commented.Body, err, "comment")
	require.NotNil(t, commented.JSON201.Comments, "comments")
	assert.Len(t, *commented.JSON201.Comments, 1, "comments")
	missing, err := c.AddCommentWithResponse(t.Context(), uuid.MustParse("00000000-0000-4000-8000-000000000000"), itsmclient.AddCommentJSONRequestBody{CommentText: new("x")})
	answered(t, 404, missing, missing.Body, err, "comment on no ticket")
	// A body that is no JSON object: no generated client sends it.
	call(t, itsm.CreateTicket.Method, api, `null`, 400, nil)
	list, err := c.ListTicketsWithResponse(t.Context(), &itsmclient.ListTicketsParams{Caller: caller})
	answered(t, 200, list, list.Body, err, "list")
	require.NotNil(t, list.JSON200.Tickets, "list")
	if assert.Len(t, *list.JSON200.Tickets, 1, "list") {
		assert.Equal(t, tk.JSON201.TicketId, (*list.JSON200.Tickets)[0].TicketId, "list: ticket id")
	}
	for _, st := range []string{"in_progress", "resolved", "closed"} {
		moved, err := c.SetStatusWithResponse(t.Context(), id, itsmclient.SetStatusJSONRequestBody{Status: &st})
		answered(t, 200, moved, moved.Body, err, "status to "+st)
	}
	reopened, err := c.SetStatusWithResponse(t.Context(), id, itsmclient.SetStatusJSONRequestBody{Status: new("open")})
	answered(t, 409, reopened, reopened.Body, err, "status back to open")
	closed, err := c.AddCommentWithResponse(t.Context(), id, itsmclient.AddCommentJSONRequestBody{CommentText: new("x")})
	answered(t, 409, closed, closed.Body, err, "comment on a closed ticket")
	call(t, "GET", r.base+"/nothing/here", "", 404, nil)
	checkTokens(t, r.base, filepath.Dir(testenv.Template(t, "dev", "itsm")))
	checkLocalOnly(t, r.base)

	runnerPID := r.cmd.Process.Pid
	require.True(t, alive(r.javaPID), "java pid %d not running while the runner serves", r.javaPID)
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-r.exited:
		assert.NoError(t, err, "runner exit after SIGTERM")
	case <-time.After(30 * time.Second):
		require.FailNow(t, "runner did not exit 30s after SIGTERM")
	}
	waitGone(t, "runner", runnerPID)
	waitGone(t, "java", r.javaPID)
}

// A runner that dies without cleaning up (SIGKILL) must still not leave
// java behind: the parent-death signal takes it down.
func TestJavaDiesWithKilledRunner(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("parent-death signal is Linux-only")
	}
	r := startEnv(t, filepath.Dir(testenv.Template(t, "dev", "itsm")), ownJava)
	require.NoError(t, r.cmd.Process.Kill())
	var exitErr *exec.ExitError
	assert.ErrorAs(t, <-r.exited, &exitErr, "runner exit")
	waitGone(t, "java", r.javaPID)
}

// checkLocalOnly: through the running runner, what a web page could send
// (another Host, a cross-origin or text/plain write) is refused and
// creates nothing.
func checkLocalOnly(t *testing.T, base string) {
	t.Helper()
	var before, after struct {
		Tickets []any `json:"tickets"`
	}
	list := base + "/" + itsm.Name + itsm.ListTickets.URLQuery(service.Values{itsm.ParamCaller: "sess-web-page"})
	call(t, itsm.ListTickets.Method, list, "", 200, &before)
	const body = `{"caller_id":"sess-web-page","issue_description":"from a page"}`
	for _, tt := range []struct {
		name, host string
		header     map[string]string
		status     int
	}{
		{"DNS rebinding", "attacker.example:8080", map[string]string{"Content-Type": "application/json"}, 403},
		{"cross-origin text/plain", "", map[string]string{"Content-Type": "text/plain", "Origin": "https://attacker.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"text/plain", "", map[string]string{"Content-Type": "text/plain"}, 415},
		{"form", "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
	} {
		req, err := http.NewRequest(itsm.CreateTicket.Method, at(base, itsm.Name, itsm.CreateTicket), strings.NewReader(body))
		require.NoError(t, err)
		if tt.host != "" {
			req.Host = tt.host
		}
		for k, v := range tt.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, tt.status, resp.StatusCode, "%s: status; body %s", tt.name, b)
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "%s: Access-Control-Allow-Origin", tt.name)
	}
	call(t, itsm.ListTickets.Method, list, "", 200, &after)
	assert.Len(t, after.Tickets, len(before.Tickets), "refused requests created tickets")
	// A schedule run from a page is refused too.
	req, _ := http.NewRequest("POST", base+"/_local/schedules/rezagent-scheduler", nil)
	req.Header.Set("Origin", "https://attacker.example")
	if resp, err := http.DefaultClient.Do(req); assert.NoError(t, err, "cross-origin schedule run") {
		resp.Body.Close()
		assert.Equal(t, 403, resp.StatusCode, "cross-origin schedule run: status")
	}
}

// dropTables deletes the shared DynamoDB Local's tables named with suffix.
func dropTables(t *testing.T, suffix string) {
	ctx := context.Background()
	client := testenv.Client(t)
	names := map[string]string{}
	p := dynamodb.NewListTablesPaginator(client, &dynamodb.ListTablesInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Logf("cleanup: %v", err)
			return
		}
		for _, n := range page.TableNames {
			if strings.HasSuffix(n, suffix) {
				names[n] = n
			}
		}
	}
	if err := cfntables.Delete(ctx, client, names); err != nil {
		t.Logf("cleanup: %v", err)
	}
}
