package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// postCtx is post with the request's context.
func postCtx(ctx context.Context, h http.Handler, key, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/things", strings.NewReader(body)).WithContext(ctx)
	req.Header.Set(api.IdempotencyHeader, key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// unanswered is a keyed route on a table whose clock is now, whose first
// request, sent with ctx, never answers: nothing after its handler runs,
// as when its invocation times out or runs out of memory
// (runtime.Goexit stands in for the end). Later requests answer 201.
func unanswered(t *testing.T, ctx context.Context, now func() time.Time) (http.Handler, *atomic.Int32) {
	t.Helper()
	tbl, _ := keys(t)
	tbl.Now = now
	runs := new(atomic.Int32)
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			runtime.Goexit()
		}
		w.WriteHeader(http.StatusCreated)
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		postCtx(ctx, h, "k", `{}`)
	}()
	<-done
	return h, runs
}

// A first request whose handler panics (the router's recovery answers
// 500) releases its key as a 5xx does: the retry runs, and its answer is
// the one kept. Before, the key stayed in progress for 24 hours.
func TestPanicReleasesTheKey(t *testing.T) {
	tbl, _ := keys(t)
	var runs atomic.Int32
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			panic("handler bug")
		}
		w.WriteHeader(http.StatusCreated)
	}))
	require.PanicsWithValue(t, "handler bug", func() { post(h, "k", `{}`) }, "the middleware passes the panic on to the recovery")
	r := post(h, "k", `{}`)
	require.Equal(t, http.StatusCreated, r.Code, "retry after a panic")
	require.EqualValues(t, 2, runs.Load(), "retry after a panic runs")
	r = post(h, "k", `{}`)
	assert.Equal(t, http.StatusCreated, r.Code, "third")
	assert.EqualValues(t, 2, runs.Load(), "third: the kept answer, no run")
}

// A first request that never answers (unanswered) holds its key until InProgressMargin after its
// invocation's deadline, not for the whole window: a retry before that is
// 409 in_progress, one after it runs.
func TestUnansweredRequestHoldsTheKeyUntilItsDeadline(t *testing.T) {
	start := time.Now()
	clock := start
	ctx, cancel := context.WithDeadline(t.Context(), start.Add(10*time.Second))
	defer cancel()
	h, runs := unanswered(t, ctx, func() time.Time { return clock })

	clock = start.Add(10*time.Second + api.InProgressMargin - time.Second)
	r := post(h, "k", `{}`)
	require.Equal(t, http.StatusConflict, r.Code, "retry before the deadline and margin")
	require.EqualValues(t, 1, runs.Load(), "retry before the deadline and margin runs nothing")
	clock = start.Add(10*time.Second + api.InProgressMargin + time.Second)
	r = post(h, "k", `{}`)
	require.Equal(t, http.StatusCreated, r.Code, "retry after the deadline and margin")
	require.EqualValues(t, 2, runs.Load(), "retry after the deadline and margin runs")
	// The answered request's key is kept for the window.
	clock = clock.Add(api.IdempotencyWindow - time.Minute)
	r = post(h, "k", `{}`)
	assert.Equal(t, http.StatusCreated, r.Code, "a day later")
	assert.Equal(t, "true", r.Header().Get("Idempotent-Replayed"), "a day later: replayed")
	assert.EqualValues(t, 2, runs.Load(), "a day later: no run")
}

// Without a deadline in its context a request holds its key for at most
// MaxInProgress and the margin.
func TestInProgressIsBoundedWithoutADeadline(t *testing.T) {
	start := time.Now()
	clock := start
	h, runs := unanswered(t, context.Background(), func() time.Time { return clock })
	clock = start.Add(api.MaxInProgress + api.InProgressMargin + time.Second)
	r := post(h, "k", `{}`)
	require.Equal(t, http.StatusCreated, r.Code, "retry after MaxInProgress and the margin")
	require.EqualValues(t, 2, runs.Load(), "retry after MaxInProgress and the margin runs")
}

// postAs is post by caller c.
func postAs(h http.Handler, c api.Caller, key, body string) *httptest.ResponseRecorder {
	return postCtx(api.WithCaller(context.Background(), c), h, key, body)
}

// A key belongs to its caller: another principal (or another token's
// subject) sending the same key and body is a fresh request that runs,
// never a replay of the first caller's answer, and with another body
// never a 422 that tells it the key was used.
func TestKeysAreTheCallers(t *testing.T) {
	tbl, _ := keys(t)
	var runs atomic.Int32
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := runs.Add(1)
		w.WriteHeader(http.StatusCreated)
		c, _ := api.CallerFrom(r.Context())
		_, _ = w.Write([]byte(`{"run":` + strconv.Itoa(int(n)) + `,"for":"` + c.ID() + `"}`))
	}))
	alice := api.Caller{IAM: "arn:aws:iam::111122223333:role/alice"}
	mallory := api.Caller{IAM: "arn:aws:iam::111122223333:role/mallory"}
	bob := api.Caller{Subject: "u1", Claims: map[string]string{"iss": "https://idp.example/tenant-a", "sub": "u1"}}
	eve := api.Caller{Subject: "u1", Claims: map[string]string{"iss": "https://idp.example/tenant-b", "sub": "u1"}}

	first := postAs(h, alice, "k", `{"a":1}`)
	require.Equal(t, http.StatusCreated, first.Code, "alice")
	r := postAs(h, mallory, "k", `{"a":1}`)
	assert.Equal(t, http.StatusCreated, r.Code, "mallory with alice's key and body")
	assert.Empty(t, r.Header().Get("Idempotent-Replayed"), "mallory with alice's key and body: not a replay")
	assert.NotContains(t, r.Body.String(), "alice", "mallory with alice's key and body: not alice's answer")
	assert.EqualValues(t, 2, runs.Load(), "mallory with alice's key and body: a run of its own")
	r = postAs(h, mallory, "k2", `{"a":1}`)
	assert.Equal(t, http.StatusCreated, r.Code, "mallory's own key")
	assert.EqualValues(t, 3, runs.Load(), "mallory's own key runs")
	r = postAs(h, alice, "k2", `{"a":2}`)
	assert.Equal(t, http.StatusCreated, r.Code, "alice with mallory's key and another body: a run, not 422")
	assert.EqualValues(t, 4, runs.Load(), "alice with mallory's key runs")
	r = postAs(h, alice, "k", `{"a":1}`)
	assert.Equal(t, http.StatusCreated, r.Code, "alice's retry")
	assert.Equal(t, first.Body.String(), r.Body.String(), "alice's retry: her kept answer")
	assert.EqualValues(t, 4, runs.Load(), "alice's retry runs nothing")
	r = postAs(h, bob, "k", `{"a":1}`)
	assert.Equal(t, http.StatusCreated, r.Code, "bob")
	assert.EqualValues(t, 5, runs.Load(), "bob runs")
	r = postAs(h, eve, "k", `{"a":1}`)
	assert.Equal(t, http.StatusCreated, r.Code, "the same subject of another issuer")
	assert.EqualValues(t, 6, runs.Load(), "the same subject of another issuer: a run of its own")
}

// A field the handler marks Secret is answered the first time only: the
// replay leaves it out and names it in Idempotent-Redacted.
func TestSecretFieldsAreNotReplayed(t *testing.T) {
	tbl, _ := keys(t)
	var runs atomic.Int32
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		api.Secret(w, "external_id")
		api.WriteJSON(w, http.StatusCreated, map[string]string{"account_id": "123456789012", "external_id": "nucleus-secret"})
	}))
	r := post(h, "k", `{}`)
	require.Equal(t, http.StatusCreated, r.Code, "first")
	require.Contains(t, r.Body.String(), "nucleus-secret", "first: the secret shown")
	r = post(h, "k", `{}`)
	require.Equal(t, http.StatusCreated, r.Code, "replay")
	require.EqualValues(t, 1, runs.Load(), "replay runs nothing")
	require.Equal(t, "true", r.Header().Get("Idempotent-Replayed"), "replay")
	assert.NotContains(t, r.Body.String(), "nucleus-secret", "replayed body: no external id")
	assert.Contains(t, r.Body.String(), `"account_id":"123456789012"`, "replayed body: the account")
	assert.Equal(t, "external_id", r.Header().Get(api.RedactedHeader))
}

// An answer about data that expires (api.Expires: a Stak message's TTL)
// is replayed until then only, not for the whole window: a retry after
// the data is gone is a new request, not the answer of a message that no
// longer exists.
func TestAnswersExpireWithTheirData(t *testing.T) {
	tbl, _ := keys(t)
	start := time.Now()
	clock := start
	tbl.Now = func() time.Time { return clock }
	var runs atomic.Int32
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := runs.Add(1)
		api.Expires(w, start.Add(2*time.Hour))
		api.Expires(w, start.Add(time.Hour)) // the soonest counts
		api.WriteJSON(w, http.StatusCreated, map[string]int32{"run": n})
	}))
	require.Equal(t, `{"run":1}`+"\n", post(h, "k", `{}`).Body.String(), "first")
	clock = start.Add(time.Hour - time.Minute)
	r := post(h, "k", `{}`)
	assert.Equal(t, "true", r.Header().Get("Idempotent-Replayed"), "before the data expires: replayed")
	assert.EqualValues(t, 1, runs.Load(), "before the data expires: runs")
	clock = start.Add(time.Hour + time.Minute)
	r = post(h, "k", `{}`)
	assert.Empty(t, r.Header().Get("Idempotent-Replayed"), "after the data expired: a new request")
	assert.EqualValues(t, 2, runs.Load(), "after the data expired: runs")
}
