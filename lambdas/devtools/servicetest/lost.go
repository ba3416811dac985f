package servicetest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
)

// Measure runs a service's cost cases. Without a proxy it is
// ddbrecord.Measure: each case's DynamoDB cost beside its minimum. With
// one (FaultyClient's, whose client the handler uses) it runs the same
// cases in the same order with the answer to each write case's first
// DynamoDB write lost: the proxy forwards the write, DynamoDB applies it,
// the connection closes, and the SDK sends it again. Every case must then
// answer exactly the status it answers without the fault, and every later
// case still its own, so a retry that did anything twice (a second comment,
// a 409 over its own change, a phantom item) shows up as a wrong status
// here or further down. It returns the cost rows, or nil with a proxy.
func Measure(t *testing.T, h http.Handler, rec *ddbrecord.Recorder, proxy *ddbfault.Proxy, cases []ddbrecord.Case) []ddbrecord.Row {
	t.Helper()
	if proxy == nil {
		return ddbrecord.Measure(t, h, rec, cases)
	}
	var b strings.Builder
	b.WriteString("| operation | status | first write's answer lost |\n|---|---:|---|\n")
	lost := 0
	for _, c := range cases {
		if c.Method == http.MethodGet {
			r := apitest.Do(t, h, c.Method, c.Path(), c.Body, c.Header...)
			if r.Status != c.Status {
				t.Fatalf("%s: %d %s, want %d", c.Operation, r.Status, r.Body, c.Status)
			}
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
		if r.Status != c.Status {
			t.Errorf("%s with its first write's answer lost (%v): %d %s, want %d as without the fault", c.Operation, dropped, r.Status, r.Body, c.Status)
		}
		fmt.Fprintf(&b, "| %s | %d | %s |\n", c.Operation, r.Status, map[bool]string{true: "yes", false: "no write reached DynamoDB"}[dropped])
	}
	if lost == 0 {
		t.Error("no case wrote to DynamoDB: nothing was proven")
	}
	t.Logf("every write case with its first write's answer lost:\n%s", b.String())
	return nil
}

// Lose, when lose is set, points s.Client at a FaultyClient of function
// and returns its proxy (for Measure); otherwise it changes nothing and
// returns nil. A handler built on s.Client afterwards meets the faults.
func (s *Service) Lose(t testing.TB, function string, lose bool) *ddbfault.Proxy {
	t.Helper()
	if !lose {
		return nil
	}
	c, p := FaultyClient(t, function)
	s.Client = c
	return p
}
