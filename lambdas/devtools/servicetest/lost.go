package servicetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Mode is how Measure runs a service's cost cases.
type Mode int

const (
	// Cost measures each case's DynamoDB cost beside its minimum.
	Cost Mode = iota
	// LostAnswers runs each write case with its first write's answer lost.
	LostAnswers
	// Throttled runs each case with every DynamoDB request throttled.
	Throttled
	// Canned benchmarks each case's handler beside its raw SDK twin over
	// its recorded DynamoDB answers (canned.go); t must be a *testing.B.
	Canned
)

// Faults is the proxy a handler's client goes through, and the mode.
type Faults struct {
	Proxy *ddbfault.Proxy
	Mode  Mode
	// For Canned: the client the handlers' clients copy, and the
	// service's handler on a client (Serve).
	base    *dynamodb.Client
	handler func(*dynamodb.Client) http.Handler
}

// Serve gives Canned the service's handler on a client, built as the
// function builds it (its logger writing JSON at info level into
// io.Discard: its log line is part of its work). It does nothing in the
// other modes, f nil (Cost) included.
func (f *Faults) Serve(handler func(c *dynamodb.Client) http.Handler) {
	if f != nil {
		f.handler = handler
	}
}

// Measure runs a service's cost cases in order, as the mode says:
//
//   - Cost (f nil): ddbrecord.Measure, each case's DynamoDB cost beside
//     its minimum; it returns the rows.
//   - LostAnswers: the answer to each write case's first DynamoDB write is
//     lost (the proxy forwards the write, DynamoDB applies it, the
//     connection closes, the SDK sends it again). Every case must answer
//     exactly the status it answers without the fault, and every later
//     case still its own, so a retry that did anything twice (a second
//     comment, a 409 over its own change, a phantom item) shows up as a
//     wrong status here or further down.
//   - Throttled: every DynamoDB request is throttled, as a table past its
//     on-demand maximum is. A case that reaches DynamoDB must answer 503
//     unavailable with Retry-After once the client's retries are spent, one
//     that does not its usual status; never a 500. Each case is then sent
//     again without the throttle and must answer as usual: the throttled
//     attempt changed nothing.
func Measure(t testing.TB, h http.Handler, rec *ddbrecord.Recorder, f *Faults, cases []ddbrecord.Case) []ddbrecord.Row {
	t.Helper()
	switch {
	case f == nil || f.Mode == Cost:
		return ddbrecord.Measure(t, h, rec, cases)
	case f.Mode == Throttled:
		throttled(t, h, f.Proxy, cases)
		return nil
	case f.Mode == Canned:
		canned(t, f, cases)
		return nil
	}
	proxy := f.Proxy
	var b strings.Builder
	b.WriteString("| operation | status | first write's answer lost |\n|---|---:|---|\n")
	lost := 0
	for _, c := range cases {
		if c.Method == http.MethodGet {
			r := apitest.Do(t, h, c.Method, c.Path(), c.Body, c.Header...)
			require.Equal(t, c.Status, r.Status, "%s: status (body %s)", c.Operation, r.Body)
			continue
		}
		before := proxy.Faults()
		proxy.NextOn(ddbfault.AnyWrite, ddbfault.DropAnswer, 1)
		r := apitest.Do(t, h, c.Method, c.Path(), c.Body, c.Header...)
		proxy.Clear()
		dropped := proxy.Faults() > before
		if dropped {
			lost++
		}
		assert.Equal(t, c.Status, r.Status, "%s with its first write's answer lost (%v): status as without the fault (body %s)", c.Operation, dropped, r.Body)
		fmt.Fprintf(&b, "| %s | %d | %s |\n", c.Operation, r.Status, map[bool]string{true: "yes", false: "no write reached DynamoDB"}[dropped])
	}
	assert.NotZero(t, lost, "write cases whose first write's answer was lost (none proves nothing)")
	t.Logf("every write case with its first write's answer lost:\n%s", b.String())
	return nil
}

// Faults, for LostAnswers and Throttled, points s.Client at a
// FaultyClient of function and returns it with its proxy (for Measure);
// for Cost it changes nothing and returns nil; for Canned it changes
// nothing and returns the Faults that Serve completes. A handler built on
// s.Client afterwards meets the faults.
func (s *Service) Faults(t testing.TB, function string, mode Mode) *Faults {
	t.Helper()
	switch mode {
	case Cost:
		return nil
	case Canned:
		return &Faults{Mode: Canned, base: s.Client}
	}
	c, p := FaultyClient(t, function)
	s.Client = c
	return &Faults{Proxy: p, Mode: mode}
}

// throttled runs cases with every DynamoDB request throttled.
func throttled(t testing.TB, h http.Handler, proxy *ddbfault.Proxy, cases []ddbrecord.Case) {
	t.Helper()
	defer proxy.Set("", 0)
	unavailable := 0
	for _, c := range cases {
		// A case's path may prepare what it needs through the API first:
		// that runs unthrottled.
		proxy.Set("", 0)
		path := c.Path()
		proxy.Set(ddbfault.Throttle, 1)
		before := proxy.Requests()
		r := apitest.Do(t, h, c.Method, path, c.Body, c.Header...)
		reached := proxy.Requests() > before
		switch {
		case reached && r.Status == http.StatusServiceUnavailable:
			unavailable++
			var body apitest.ErrorBody
			if assert.NoError(t, json.Unmarshal(r.Body, &body), "%s under a throttle: 503's body %s", c.Operation, r.Body) {
				assert.Equal(t, api.CodeUnavailable, body.Error.Code, "%s under a throttle: 503's error code", c.Operation)
			}
			assert.Equal(t, strconv.Itoa(int(ddb.RetryAfter.Seconds())), r.Header.Get("Retry-After"), "%s under a throttle: 503's Retry-After", c.Operation)
		case reached:
			assert.Equal(t, http.StatusServiceUnavailable, r.Status, "%s under a throttle: status, 503 unavailable (body %s)", c.Operation, r.Body)
		default:
			assert.Equal(t, c.Status, r.Status, "%s refused before DynamoDB: status as without the fault (body %s)", c.Operation, r.Body)
		}
		// Then as without the fault, so that the next cases find the
		// state they were written for; the throttled attempt changed
		// nothing, so it answers as usual.
		proxy.Set("", 0)
		r = apitest.Do(t, h, c.Method, path, c.Body, c.Header...)
		require.Equal(t, c.Status, r.Status, "%s after the throttle lifted: status (body %s)", c.Operation, r.Body)
	}
	assert.NotZero(t, unavailable, "cases that reached DynamoDB and answered 503 (none proves nothing)")
	t.Logf("under a sustained throttle: %d of %d operations reached DynamoDB and answered 503 unavailable with Retry-After %d; the rest refused their input first", unavailable, len(cases), int(ddb.RetryAfter.Seconds()))
}

// Modes runs a service's cost cases in each mode make test checks them in,
// as subtests of one test: Cost (each operation's DynamoDB requests and
// capacity beside the least its access pattern needs, and the Cost table
// of the service's doc page kept equal to them), LostAnswers (every write
// operation again, on the same setup and in the same order, with the
// answer to its first DynamoDB write lost: each must answer as it does
// without) and Throttled (every operation against a DynamoDB that
// throttles everything: 503 unavailable with Retry-After, never a 500).
// Canned is the benchmark's (make bench).
func Modes(t *testing.T, run func(t testing.TB, mode Mode)) {
	for _, m := range []struct {
		name string
		mode Mode
	}{{"Cost", Cost}, {"LostAnswers", LostAnswers}, {"Throttled", Throttled}} {
		t.Run(m.name, func(t *testing.T) { run(t, m.mode) })
	}
}
