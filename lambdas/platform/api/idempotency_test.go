package api_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

var create = service.Route{Method: "POST", Path: "/things", Idempotent: true}

// keys is a Table on a fresh one-key table (the ITSM template's), its
// client behind a fault proxy.
func keys(t *testing.T) (api.IdempotencyTable, *ddbfault.Proxy) {
	t.Helper()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "itsm"))
	var table string
	for _, n := range names {
		table = n
	}
	c, p := servicetest.FaultyClient(t, "")
	return api.IdempotencyTable{Client: c, Name: table, PartitionKey: "ticket_id"}, p
}

func post(h http.Handler, key, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/things", strings.NewReader(body))
	req.Header.Set(api.IdempotencyHeader, key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// A first request that failed with a 5xx releases its key: the retry runs
// (and its answer is then the one kept).
func TestServerErrorReleasesTheKey(t *testing.T) {
	tbl, _ := keys(t)
	var runs atomic.Int32
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"t1"}`))
	}))
	if r := post(h, "k", `{}`); r.Code != 503 {
		t.Fatalf("first: %d", r.Code)
	}
	if r := post(h, "k", `{}`); r.Code != 201 || runs.Load() != 2 {
		t.Fatalf("retry after a 503: %d after %d runs, want 201 after 2", r.Code, runs.Load())
	}
	if r := post(h, "k", `{}`); r.Code != 201 || r.Body.String() != `{"id":"t1"}` || runs.Load() != 2 {
		t.Errorf("third: %d %s after %d runs, want the kept 201 without a run", r.Code, r.Body, runs.Load())
	}
}

// The key's record is written with a token, so when the answer to that
// write is lost and the SDK retries it, the request still runs, once.
func TestLostAnswerToTheRecordStillRunsOnce(t *testing.T) {
	tbl, p := keys(t)
	var runs atomic.Int32
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	p.NextOn("PutItem", ddbfault.DropAnswer, 1)
	if r := post(h, "k", `{}`); r.Code != 201 || runs.Load() != 1 {
		t.Fatalf("%d after %d runs, want 201 after 1", r.Code, runs.Load())
	}
	if r := post(h, "k", `{}`); r.Code != 201 || runs.Load() != 1 {
		t.Errorf("retry: %d after %d runs, want the kept 201", r.Code, runs.Load())
	}
}

// A route the contract does not mark, or a request without a key, passes.
func TestOnlyMarkedRoutesWithAKey(t *testing.T) {
	tbl, p := keys(t)
	var runs atomic.Int32
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs.Add(1) })
	post(tbl.Middleware(service.Route{Method: "POST", Path: "/things"}, next), "k", `{}`)
	post(tbl.Middleware(create, next), "", `{}`)
	if runs.Load() != 2 || p.Requests() != 0 {
		t.Errorf("%d runs, %d DynamoDB requests: want 2 and none", runs.Load(), p.Requests())
	}
}
