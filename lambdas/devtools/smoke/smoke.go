// Package smoke is dev-only: a short end-to-end check of every dynastack
// service against a running deployment — a deployed stage (requests signed
// with SigV4 for execute-api, base URLs from the stacks' ApiUrl outputs) or
// the local runner of make dev (no signature). Per service it creates an
// item, reads it, finds it in a list, changes its state, and removes what
// it created where the API has a delete; what it cannot delete it marks as
// smoke data (docs/smoke.md lists what stays behind). Each step is a named
// Check; Run stops a service's sequence at its first failed check, since
// the later ones need what it would have made, and still runs its cleanup.
package smoke

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	pmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Services are the services checked, in this order.
var Services = []string{itsmcontract.Name, rezcontract.Name, nucleuscontract.Name, stakcontract.Name, pmcontract.Name}

// Target is what Run checks.
type Target struct {
	// URLs maps each service to its API's base URL (no trailing slash): a
	// deployed stack's ApiUrl output, or <make dev URL>/<service>.
	URLs map[string]string
	// HTTP sends every request; for a deployed stage a client whose
	// transport signs (SigV4). Default: a client with a 30 s timeout.
	HTTP *http.Client
	// StakToken is an end-user token of the stage's identity provider for
	// Stak's JWT routes; its tenant and sub claims name the tenant and
	// user the Stak check publishes to. Without it Stak fails its first
	// check, naming the missing token.
	StakToken string
	// Run tags everything created (default "smoke-<time>-<random>").
	Run string
	// Wait bounds each wait for eventually consistent reads (a GSI list)
	// and for rez_agent's pipeline to deliver the message. Default 60 s.
	Wait time.Duration
}

// Check is one named step of a service's sequence.
type Check struct {
	Service string
	Name    string
	Err     error // nil: passed
}

func (c Check) String() string {
	if c.Err != nil {
		return fmt.Sprintf("FAIL %s: %s: %v", c.Service, c.Name, c.Err)
	}
	return fmt.Sprintf("ok   %s: %s", c.Service, c.Name)
}

// Report is a run's outcome: its checks in order, and notes on what was
// left behind as smoke data.
type Report struct {
	Run    string
	Checks []Check
	Notes  []string
}

// Failed returns the failed checks.
func (r Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if c.Err != nil {
			out = append(out, c)
		}
	}
	return out
}

// String prints one line per check, then the notes, then a summary naming
// each failed check.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "smoke run %s\n", r.Run)
	for _, c := range r.Checks {
		fmt.Fprintln(&b, c)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	failed := r.Failed()
	if len(failed) == 0 {
		fmt.Fprintf(&b, "smoke: all %d checks passed\n", len(r.Checks))
		return b.String()
	}
	names := make([]string, len(failed))
	for i, c := range failed {
		names[i] = c.Service + ": " + c.Name
	}
	fmt.Fprintf(&b, "smoke: %d of %d checks failed: %s\n", len(failed), len(r.Checks), strings.Join(names, "; "))
	return b.String()
}

// Run checks every service of Services in turn.
func Run(ctx context.Context, t Target) Report {
	if t.HTTP == nil {
		t.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if t.Wait <= 0 {
		t.Wait = 60 * time.Second
	}
	if t.Run == "" {
		t.Run = NewRun(time.Now())
	}
	rep := &Report{Run: t.Run}
	for _, svc := range Services {
		s := &suite{svc: svc, rep: rep, t: t, c: client{base: t.URLs[svc], http: t.HTTP}}
		if s.c.base == "" {
			s.check("base URL", func() error { return fmt.Errorf("no base URL for %s", svc) })
			continue
		}
		s.c.base = strings.TrimSuffix(s.c.base, "/")
		checks[svc](ctx, s)
		for i := len(s.cleanups) - 1; i >= 0; i-- {
			s.cleanups[i]()
		}
	}
	return *rep
}

var checks = map[string]func(context.Context, *suite){
	itsmcontract.Name: itsm, rezcontract.Name: rezagent, nucleuscontract.Name: nucleus, stakcontract.Name: stak, pmcontract.Name: agenticpm,
}

// NewRun returns a run tag: "smoke-" with the UTC time and 4 random bytes,
// no whitespace (it goes into ids, names and created_by).
func NewRun(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "smoke-" + now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// suite runs one service's checks: after a failed check the rest of the
// sequence is skipped (check returns false), cleanups still run.
type suite struct {
	svc      string
	rep      *Report
	t        Target
	c        client
	failed   bool
	cleanups []func()
}

func (s *suite) check(name string, f func() error) bool {
	if s.failed {
		return false
	}
	err := f()
	s.rep.Checks = append(s.rep.Checks, Check{Service: s.svc, Name: name, Err: err})
	s.failed = err != nil
	return !s.failed
}

// cleanup registers a check that runs after the sequence, failed or not.
func (s *suite) cleanup(name string, f func() error) {
	s.cleanups = append(s.cleanups, func() {
		s.rep.Checks = append(s.rep.Checks, Check{Service: s.svc, Name: name, Err: f()})
	})
}

func (s *suite) note(format string, args ...any) {
	s.rep.Notes = append(s.rep.Notes, s.svc+": "+fmt.Sprintf(format, args...))
}

// eventually retries f until it returns nil or the suite's wait is over,
// for reads that are eventually consistent (GSI lists) and pipelines.
func (s *suite) eventually(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(s.t.Wait)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (then %v)", err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

type client struct {
	base string
	http *http.Client
}

func cut(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// status lists are the answers a check accepts.
var (
	s200 = []int{http.StatusOK}
	s201 = []int{http.StatusCreated}
	s404 = []int{http.StatusNotFound}
)

// answered is nil when the generated client's call err is nil and its
// answer r (a lambdas/client/<service> *…Response: its HTTPResponse and
// Body) has one of the statuses want; else an error naming the request,
// the status, the path below the base URL and the start of the answer.
func (c client) answered(r any, err error, want []int) error {
	if err != nil {
		return err
	}
	v := reflect.Indirect(reflect.ValueOf(r))
	resp, _ := v.FieldByName("HTTPResponse").Interface().(*http.Response)
	body, _ := v.FieldByName("Body").Interface().([]byte)
	if resp == nil {
		return fmt.Errorf("no HTTP response")
	}
	if !slices.Contains(want, resp.StatusCode) {
		path := resp.Request.URL.Path
		if base, err := url.Parse(c.base); err == nil {
			path = strings.TrimPrefix(path, strings.TrimSuffix(base.Path, "/"))
		}
		return fmt.Errorf("%s %s: status %d, want %v: %s", resp.Request.Method, path, resp.StatusCode, want, cut(body))
	}
	return nil
}

// acceptJSON asks the generated clients' requests for JSON (API Gateway
// and the local runner answer errors in JSON either way).
func acceptJSON(_ context.Context, req *http.Request) error {
	req.Header.Set("Accept", "application/json")
	return nil
}
