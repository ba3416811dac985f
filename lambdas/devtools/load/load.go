// Package load is dev-only: a bounded load test of a running make dev (or
// any base URL serving the services as make dev does). Per service it runs
// a fixed count of operations (creates, reads, updates, list pages) at a
// fixed concurrency, reports throughput and latency per operation, and then
// checks integrity: every acknowledged create is readable and listed
// exactly once, every list walked during the writes returned no item twice,
// and the counts the service keeps (comments, audit entries, events,
// published counters) equal the acknowledged writes. Every call goes
// through the service's generated client (lambdas/client/<service>,
// Client.ITSM, …), which is what describes the API to other teams.
//
// A 5xx, a transport error or an unexpected status is an error of its
// operation; a 503 with Retry-After (DynamoDB throttled, under FAULTS) is
// counted apart as "unavailable", and a 409 to an update (two clients
// changed one item at once) as a conflict: answers, not failures. Only
// acknowledged writes are counted by the integrity checks.
package load

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	pmclient "github.com/dynastack/dynastack/lambdas/client/agenticpm"
	itsmclient "github.com/dynastack/dynastack/lambdas/client/itsm"
	nucleusclient "github.com/dynastack/dynastack/lambdas/client/nucleus"
	rezclient "github.com/dynastack/dynastack/lambdas/client/rezagent"
	stakclient "github.com/dynastack/dynastack/lambdas/client/stak"
)

// Op names an operation kind of the mix.
type Op string

// The mix's operation kinds.
const (
	Create Op = "create"
	Read   Op = "read"
	Update Op = "update"
	List   Op = "list"
)

// Options bound a run.
type Options struct {
	// Count is the number of operations (creates, reads, updates, list
	// pages) of the mix. Default 200.
	Count int
	// Concurrency is the number of clients sending at once. Default 8.
	Concurrency int
	// HTTP is the client; a client with a 30 s timeout by default.
	HTTP *http.Client
}

// Client sends one service's requests.
type Client struct {
	run    string // the run's tag
	base   string
	http   *http.Client
	header http.Header
}

// ITSM is the generated ITSM client (lambdas/client/itsm) on c's base URL,
// HTTP client (which signs, for a deployed API) and the scenario's
// headers. A generated client fails to build only on a base URL that does
// not parse, and Run made that one from a URL that did: it panics then.
func (c *Client) ITSM() *itsmclient.ClientWithResponses {
	return must(itsmclient.NewClientWithResponses(c.base, itsmclient.WithHTTPClient(c.http), itsmclient.WithRequestEditorFn(c.edit)))
}

// RezAgent is the generated rez_agent client (lambdas/client/rezagent),
// as ITSM's.
func (c *Client) RezAgent() *rezclient.ClientWithResponses {
	return must(rezclient.NewClientWithResponses(c.base, rezclient.WithHTTPClient(c.http), rezclient.WithRequestEditorFn(c.edit)))
}

// Nucleus is the generated Nucleus client (lambdas/client/nucleus), as
// ITSM's.
func (c *Client) Nucleus() *nucleusclient.ClientWithResponses {
	return must(nucleusclient.NewClientWithResponses(c.base, nucleusclient.WithHTTPClient(c.http), nucleusclient.WithRequestEditorFn(c.edit)))
}

// Stak is the generated Stak client (lambdas/client/stak), as ITSM's.
func (c *Client) Stak() *stakclient.ClientWithResponses {
	return must(stakclient.NewClientWithResponses(c.base, stakclient.WithHTTPClient(c.http), stakclient.WithRequestEditorFn(c.edit)))
}

// AgenticPM is the generated AgenticPM client (lambdas/client/agenticpm),
// as ITSM's.
func (c *Client) AgenticPM() *pmclient.ClientWithResponses {
	return must(pmclient.NewClientWithResponses(c.base, pmclient.WithHTTPClient(c.http), pmclient.WithRequestEditorFn(c.edit)))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// edit sets the scenario's headers on a generated client's request.
func (c *Client) edit(_ context.Context, req *http.Request) error {
	for k, v := range c.header {
		req.Header[k] = v
	}
	return nil
}

// answer is a generated client's response r (a lambdas/client/<service>
// *…Response: its HTTPResponse and Body) as a scenario reads it.
func answer(r any, err error) (Answer, error) {
	if err != nil {
		return Answer{}, err
	}
	v := reflect.Indirect(reflect.ValueOf(r))
	resp, _ := v.FieldByName("HTTPResponse").Interface().(*http.Response)
	body, _ := v.FieldByName("Body").Interface().([]byte)
	if resp == nil {
		return Answer{}, fmt.Errorf("no HTTP response")
	}
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// Answer is a response as a scenario reads it.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

func cut(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// Scenario is one service's part of the load: its mix and its checks.
// Every func may be called from several goroutines at once.
type Scenario struct {
	// Service is the path prefix make dev serves the service under.
	Service string
	// Header is sent with every request (e.g. a caller id or a token).
	Header http.Header
	// Setup prepares what the creates need (a tenant, an inbox); run is a
	// unique tag of this run, to keep its items apart from others'.
	Setup func(ctx context.Context, c *Client, run string) error
	// Create makes one item and returns its id.
	Create func(ctx context.Context, c *Client, run string, i int) (string, Answer, error)
	// Read reads one item by id: a 200 is expected.
	Read func(ctx context.Context, c *Client, id string) (Answer, error)
	// Update changes one item; nil leaves updates out of the mix. Its
	// acknowledged updates are counted per id for Verify.
	Update func(ctx context.Context, c *Client, id string, i int) (Answer, error)
	// Page lists one page of the run's items (cursor "" for the first).
	Page func(ctx context.Context, c *Client, run, cursor string) (ids []string, next string, a Answer, err error)
	// Verify checks the service's own counts against the acknowledged
	// creates and updates (id → acknowledged updates); it returns the
	// problems found.
	Verify func(ctx context.Context, c *Client, run string, updates map[string]int) []string
}

// Stat is the outcome of one operation kind.
type Stat struct {
	Op          Op
	Count       int
	Errors      int // 5xx other than 503, transport errors, unexpected statuses
	Unavailable int // 503 with Retry-After
	// Conflicts are updates answered 409: two clients changed one item
	// at once and the service refused one (optimistic concurrency, e.g.
	// Nucleus's versioned updates), an answer, not a failure.
	Conflicts int
	P50, P99  time.Duration
	durations []time.Duration
}

// Report is one service's run.
type Report struct {
	Service    string
	Elapsed    time.Duration
	Ops        []Stat
	Acked      int // acknowledged creates
	Walks      int // full list walks during the writes
	Problems   []string
	FirstError string
}

// Throughput is operations per second over the run.
func (r Report) Throughput() float64 {
	n := 0
	for _, s := range r.Ops {
		n += s.Count
	}
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(n) / r.Elapsed.Seconds()
}

// Errors sums the operations' errors.
func (r Report) Errors() int {
	n := 0
	for _, s := range r.Ops {
		n += s.Errors
	}
	return n
}

type state struct {
	mu       sync.Mutex
	acked    []string
	updates  map[string]int
	stats    map[Op]*Stat
	firstErr string
}

func (s *state) record(op Op, d time.Duration, a Answer, err error, want func(int) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats[op]
	if st == nil {
		st = &Stat{Op: op}
		s.stats[op] = st
	}
	st.Count++
	st.durations = append(st.durations, d)
	switch {
	case err == nil && want(a.Status):
		return true
	case err == nil && a.Status == http.StatusServiceUnavailable && a.Header.Get("Retry-After") != "":
		st.Unavailable++
	case err == nil && op == Update && a.Status == http.StatusConflict:
		st.Conflicts++
	default:
		st.Errors++
		if s.firstErr == "" {
			if err != nil {
				s.firstErr = fmt.Sprintf("%s: %v", op, err)
			} else {
				s.firstErr = fmt.Sprintf("%s: %d %s", op, a.Status, cut(a.Body))
			}
		}
	}
	return false
}

func is2xx(s int) bool { return s/100 == 2 }

// Run runs sc against base (make dev's URL) and checks integrity.
func Run(ctx context.Context, base string, sc Scenario, opt Options) (Report, error) {
	if opt.Count <= 0 {
		opt.Count = 200
	}
	if opt.Concurrency <= 0 {
		opt.Concurrency = 8
	}
	if opt.HTTP == nil {
		opt.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	run := fmt.Sprintf("load-%d", time.Now().UnixNano())
	c := &Client{run: run, base: strings.TrimSuffix(base, "/") + "/" + sc.Service, http: opt.HTTP, header: sc.Header}
	if sc.Setup != nil {
		if err := sc.Setup(ctx, c, run); err != nil {
			return Report{Service: sc.Service}, fmt.Errorf("%s setup: %w", sc.Service, err)
		}
	}
	st := &state{updates: map[string]int{}, stats: map[Op]*Stat{}}
	rep := Report{Service: sc.Service}

	// A walker lists the run's items again and again while the writes go
	// on: a cursor must never hand out an item twice.
	walkCtx, stopWalks := context.WithCancel(ctx)
	var walkWG sync.WaitGroup
	var walkProblems []string
	walkWG.Add(1)
	go func() {
		defer walkWG.Done()
		for walkCtx.Err() == nil {
			ids, err := walk(walkCtx, c, sc, run)
			if walkCtx.Err() != nil {
				return
			}
			if err != nil {
				continue // a 503 under faults: the next walk tries again
			}
			rep.Walks++
			if d := dups(ids); len(d) > 0 && len(walkProblems) < 5 {
				walkProblems = append(walkProblems, fmt.Sprintf("a list walked during the writes returned %d item(s) twice, e.g. %s", len(d), d[0]))
			}
		}
	}()

	jobs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range opt.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				step(ctx, c, sc, st, run, i, opt.Concurrency)
			}
		}()
	}
	for i := range opt.Count {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	rep.Elapsed = time.Since(start)
	stopWalks()
	walkWG.Wait()
	rep.Problems = append(rep.Problems, walkProblems...)

	rep.Acked, rep.FirstError = len(st.acked), st.firstErr
	for _, op := range []Op{Create, Read, Update, List} {
		if s := st.stats[op]; s != nil {
			slices.Sort(s.durations)
			s.P50, s.P99 = quantile(s.durations, 0.50), quantile(s.durations, 0.99)
			rep.Ops = append(rep.Ops, *s)
		}
	}
	rep.Problems = append(rep.Problems, verify(ctx, c, sc, run, st)...)
	return rep, nil
}

// step runs operation i of the mix: creates first (one per client), then
// 3 creates, 4 reads, 2 updates and 1 list page in every 10.
func step(ctx context.Context, c *Client, sc Scenario, st *state, run string, i, clients int) {
	st.mu.Lock()
	n := len(st.acked)
	var id string
	if n > 0 {
		id = st.acked[(i*7919)%n]
	}
	st.mu.Unlock()
	op := Create
	if i >= clients && n > 0 {
		switch i % 10 {
		case 3, 4, 5, 6:
			op = Read
		case 7, 8:
			op = Update
		case 9:
			op = List
		}
	}
	if op == Update && sc.Update == nil {
		op = Read
	}
	t0 := time.Now()
	switch op {
	case Create:
		newID, a, err := sc.Create(ctx, c, run, i)
		if st.record(op, time.Since(t0), a, err, is2xx) && newID != "" {
			st.mu.Lock()
			st.acked = append(st.acked, newID)
			st.mu.Unlock()
		}
	case Read:
		a, err := sc.Read(ctx, c, id)
		st.record(op, time.Since(t0), a, err, func(s int) bool { return s == http.StatusOK })
	case Update:
		a, err := sc.Update(ctx, c, id, i)
		if st.record(op, time.Since(t0), a, err, is2xx) {
			st.mu.Lock()
			st.updates[id]++
			st.mu.Unlock()
		}
	case List:
		_, _, a, err := sc.Page(ctx, c, run, "")
		st.record(op, time.Since(t0), a, err, func(s int) bool { return s == http.StatusOK })
	}
}

// walk lists every page of the run's items.
func walk(ctx context.Context, c *Client, sc Scenario, run string) ([]string, error) {
	var all []string
	cursor := ""
	for range 10000 {
		ids, next, a, err := sc.Page(ctx, c, run, cursor)
		if err != nil {
			return nil, err
		}
		if a.Status != http.StatusOK {
			return nil, fmt.Errorf("list: %d %s", a.Status, cut(a.Body))
		}
		all = append(all, ids...)
		if next == "" {
			return all, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("list: more than 10000 pages")
}

// Stored runs a read of what a run stored, again after a 503 (a few times,
// backing off): a check of what was stored is not one of availability,
// which the run's own counts report.
func Stored(read func() (Answer, error)) (Answer, error) {
	var a Answer
	var err error
	for attempt := range 5 {
		if a, err = read(); err == nil && a.Status != http.StatusServiceUnavailable {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return a, err
}

// verify reads every acknowledged create back, walks the list once more
// and lets the scenario check its counts. A 503 is retried a few times:
// the check is about what was stored, not about availability.
func verify(ctx context.Context, c *Client, sc Scenario, run string, st *state) []string {
	var problems []string
	add := func(format string, args ...any) {
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	for _, id := range st.acked {
		a, err := Stored(func() (Answer, error) { return sc.Read(ctx, c, id) })
		if err != nil || a.Status != http.StatusOK {
			add("acknowledged create %s is not readable: %d %s %v", id, a.Status, cut(a.Body), err)
		}
	}
	var ids []string
	var err error
	for attempt := range 5 {
		if ids, err = walk(ctx, c, sc, run); err == nil {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	if err != nil {
		add("final list walk failed: %v", err)
	} else {
		seen := map[string]int{}
		for _, id := range ids {
			seen[id]++
		}
		for _, id := range st.acked {
			if seen[id] != 1 {
				add("acknowledged create %s is listed %d times, want once", id, seen[id])
			}
		}
		if d := dups(ids); len(d) > 0 {
			add("the final list returned %d item(s) twice, e.g. %s", len(d), d[0])
		}
	}
	if sc.Verify != nil {
		for _, p := range sc.Verify(ctx, c, run, st.updates) {
			add("%s", p)
		}
	}
	return problems
}

func dups(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if seen[id] {
			out = append(out, id)
		}
		seen[id] = true
	}
	sort.Strings(out)
	return out
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Table formats reports as a Markdown table, one row per operation kind.
func Table(reports []Report) string {
	var b strings.Builder
	b.WriteString("| service | op | count | errors | 503 | 409 | p50 | p99 | ops/s (service) | acked creates | walks | integrity |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range reports {
		integrity := "ok"
		if len(r.Problems) > 0 {
			integrity = fmt.Sprintf("%d problem(s)", len(r.Problems))
		}
		for _, s := range r.Ops {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %s | %s | %.0f | %d | %d | %s |\n", r.Service, s.Op, s.Count, s.Errors, s.Unavailable, s.Conflicts,
				s.P50.Round(100*time.Microsecond), s.P99.Round(100*time.Microsecond), r.Throughput(), r.Acked, r.Walks, integrity)
		}
	}
	return b.String()
}
