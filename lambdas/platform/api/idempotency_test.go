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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.Equal(t, 503, post(h, "k", `{}`).Code, "first")
	require.Equal(t, 201, post(h, "k", `{}`).Code, "retry after a 503")
	require.Equal(t, int32(2), runs.Load(), "runs after the retry")
	r := post(h, "k", `{}`)
	assert.Equal(t, 201, r.Code, "third: the kept 201")
	assert.Equal(t, `{"id":"t1"}`, r.Body.String(), "third: the kept body")
	assert.Equal(t, int32(2), runs.Load(), "third: runs (the kept answer without a run)")
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
	require.Equal(t, 201, post(h, "k", `{}`).Code, "first")
	require.Equal(t, int32(1), runs.Load(), "runs")
	assert.Equal(t, 201, post(h, "k", `{}`).Code, "retry: the kept 201")
	assert.Equal(t, int32(1), runs.Load(), "retry: runs")
}

// A route the contract does not mark, or a request without a key, passes.
func TestOnlyMarkedRoutesWithAKey(t *testing.T) {
	tbl, p := keys(t)
	var runs atomic.Int32
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs.Add(1) })
	post(tbl.Middleware(service.Route{Method: "POST", Path: "/things"}, next), "k", `{}`)
	post(tbl.Middleware(create, next), "", `{}`)
	assert.Equal(t, int32(2), runs.Load(), "runs")
	assert.Zero(t, p.Requests(), "DynamoDB requests")
}
