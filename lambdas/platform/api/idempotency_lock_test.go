package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
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
