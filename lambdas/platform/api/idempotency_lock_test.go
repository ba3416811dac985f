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
	func() {
		defer func() {
			if p := recover(); p != "handler bug" {
				t.Errorf("the middleware swallowed or changed the panic: %v", p)
			}
		}()
		post(h, "k", `{}`)
	}()
	if r := post(h, "k", `{}`); r.Code != http.StatusCreated || runs.Load() != 2 {
		t.Fatalf("retry after a panic: %d after %d runs, want 201 after 2", r.Code, runs.Load())
	}
	if r := post(h, "k", `{}`); r.Code != http.StatusCreated || runs.Load() != 2 {
		t.Errorf("third: %d after %d runs, want the kept 201 without a run", r.Code, runs.Load())
	}
}

// A first request that never answers (its invocation timed out, or ran
// out of memory: nothing after the handler runs, which runtime.Goexit
// stands in for) holds its key until InProgressMargin after its
// invocation's deadline, not for the whole window: a retry before that is
// 409 in_progress, one after it runs.
func TestUnansweredRequestHoldsTheKeyUntilItsDeadline(t *testing.T) {
	tbl, _ := keys(t)
	start := time.Now()
	clock := start
	tbl.Now = func() time.Time { return clock }
	var runs atomic.Int32
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			runtime.Goexit()
		}
		w.WriteHeader(http.StatusCreated)
	}))
	ctx, cancel := context.WithDeadline(t.Context(), start.Add(10*time.Second))
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		postCtx(ctx, h, "k", `{}`)
	}()
	<-done

	clock = start.Add(10*time.Second + api.InProgressMargin - time.Second)
	if r := post(h, "k", `{}`); r.Code != http.StatusConflict || runs.Load() != 1 {
		t.Fatalf("retry before the deadline and margin: %d after %d runs, want 409 after 1", r.Code, runs.Load())
	}
	clock = start.Add(10*time.Second + api.InProgressMargin + time.Second)
	if r := post(h, "k", `{}`); r.Code != http.StatusCreated || runs.Load() != 2 {
		t.Fatalf("retry after the deadline and margin: %d after %d runs, want 201 after 2", r.Code, runs.Load())
	}
	// The answered request's key is kept for the window.
	clock = clock.Add(api.IdempotencyWindow - time.Minute)
	if r := post(h, "k", `{}`); r.Code != http.StatusCreated || r.Header().Get("Idempotent-Replayed") != "true" || runs.Load() != 2 {
		t.Errorf("a day later: %d (replayed %q) after %d runs, want the kept 201 without a run", r.Code, r.Header().Get("Idempotent-Replayed"), runs.Load())
	}
}

// Without a deadline in its context a request holds its key for at most
// MaxInProgress and the margin.
func TestInProgressIsBoundedWithoutADeadline(t *testing.T) {
	tbl, _ := keys(t)
	start := time.Now()
	clock := start
	tbl.Now = func() time.Time { return clock }
	var runs atomic.Int32
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			runtime.Goexit()
		}
		w.WriteHeader(http.StatusCreated)
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		post(h, "k", `{}`)
	}()
	<-done
	clock = start.Add(api.MaxInProgress + api.InProgressMargin + time.Second)
	if r := post(h, "k", `{}`); r.Code != http.StatusCreated || runs.Load() != 2 {
		t.Fatalf("retry after MaxInProgress and the margin: %d after %d runs, want 201 after 2", r.Code, runs.Load())
	}
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
	if first.Code != http.StatusCreated {
		t.Fatalf("alice: %d", first.Code)
	}
	if r := postAs(h, mallory, "k", `{"a":1}`); r.Code != http.StatusCreated || r.Header().Get("Idempotent-Replayed") != "" || runs.Load() != 2 || strings.Contains(r.Body.String(), "alice") {
		t.Errorf("mallory with alice's key and body: %d %s (replayed %q) after %d runs, want a run of its own", r.Code, r.Body, r.Header().Get("Idempotent-Replayed"), runs.Load())
	}
	if r := postAs(h, mallory, "k2", `{"a":1}`); r.Code != http.StatusCreated || runs.Load() != 3 {
		t.Errorf("mallory's own key: %d after %d runs", r.Code, runs.Load())
	}
	if r := postAs(h, alice, "k2", `{"a":2}`); r.Code != http.StatusCreated || runs.Load() != 4 {
		t.Errorf("alice with mallory's key and another body: %d after %d runs, want a run, not 422", r.Code, runs.Load())
	}
	if r := postAs(h, alice, "k", `{"a":1}`); r.Code != http.StatusCreated || r.Body.String() != first.Body.String() || runs.Load() != 4 {
		t.Errorf("alice's retry: %d %s after %d runs, want her kept answer", r.Code, r.Body, runs.Load())
	}
	if r := postAs(h, bob, "k", `{"a":1}`); r.Code != http.StatusCreated || runs.Load() != 5 {
		t.Errorf("bob: %d after %d runs", r.Code, runs.Load())
	}
	if r := postAs(h, eve, "k", `{"a":1}`); r.Code != http.StatusCreated || runs.Load() != 6 {
		t.Errorf("the same subject of another issuer: %d after %d runs, want a run of its own", r.Code, runs.Load())
	}
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
	if r := post(h, "k", `{}`); r.Code != http.StatusCreated || !strings.Contains(r.Body.String(), "nucleus-secret") {
		t.Fatalf("first: %d %s, want the secret shown", r.Code, r.Body)
	}
	r := post(h, "k", `{}`)
	if r.Code != http.StatusCreated || runs.Load() != 1 || r.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d after %d runs", r.Code, runs.Load())
	}
	if strings.Contains(r.Body.String(), "nucleus-secret") || !strings.Contains(r.Body.String(), `"account_id":"123456789012"`) {
		t.Errorf("replayed body %s: want the account without its external id", r.Body)
	}
	if got := r.Header().Get(api.RedactedHeader); got != "external_id" {
		t.Errorf("%s = %q, want external_id", api.RedactedHeader, got)
	}
}
