package api_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// A first request the handler refused (a 4xx) changed nothing, by the
// API's rules, so it releases its key as a 5xx does: the retry runs, and
// only a success is kept for replays. Before, a refusal was kept for the
// whole window, so AgenticPM's 409 "a concurrent request changed the same
// items; retry" (a transaction conflict) answered every retry with the
// same 409 for 24 hours and the create the client retried never ran.
func TestRefusalsReleaseTheKey(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first error
	}{
		{"409 concurrent change, retry", api.Conflict("a concurrent request changed the same items; retry")},
		{"429", &api.Error{Status: http.StatusTooManyRequests, Code: "too_many_requests", Message: "slow down"}},
		{"404 of a parent not there yet", api.NotFound("project p1 not found")},
		{"403", api.Forbidden("not yours")},
		{"400", api.Invalid(api.FieldError{Field: "name", Message: "required"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, _ := keys(t)
			var runs atomic.Int32
			h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if runs.Add(1) == 1 {
					api.WriteError(w, r, tc.first)
					return
				}
				api.WriteJSON(w, http.StatusCreated, map[string]string{"id": "t1"})
			}))
			first := post(h, "k", `{"a":1}`)
			require.Equal(t, api.ErrorFor(tc.first).Status, first.Code, "first: the refusal")
			r := post(h, "k", `{"a":1}`)
			require.Equal(t, http.StatusCreated, r.Code, "retry after the refusal: %s", r.Body)
			assert.Empty(t, r.Header().Get("Idempotent-Replayed"), "retry after the refusal: not a replay")
			assert.EqualValues(t, 2, runs.Load(), "retry after the refusal runs")
			r = post(h, "k", `{"a":1}`)
			assert.Equal(t, http.StatusCreated, r.Code, "third: the kept 201")
			assert.Equal(t, "true", r.Header().Get("Idempotent-Replayed"), "third: replayed")
			assert.EqualValues(t, 2, runs.Load(), "third runs nothing")
		})
	}
}

// A client that fixes the body a 400 refused may send it with the same
// key: the refusal was not kept, so the fixed request runs instead of
// answering 422 idempotency_key_reused.
func TestFixedBodyAfterARefusalRuns(t *testing.T) {
	tbl, _ := keys(t)
	var runs atomic.Int32
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		var in struct {
			Name string `json:"name"`
		}
		if err := api.DecodeJSON(w, r, 0, &in); err != nil {
			api.WriteError(w, r, err)
			return
		}
		if in.Name == "" {
			api.WriteError(w, r, api.Invalid(api.FieldError{Field: "name", Message: "required"}))
			return
		}
		api.WriteJSON(w, http.StatusCreated, map[string]string{"name": in.Name})
	}))
	require.Equal(t, http.StatusBadRequest, post(h, "k", `{"name":""}`).Code, "first: refused")
	r := post(h, "k", `{"name":"fixed"}`)
	assert.Equal(t, http.StatusCreated, r.Code, "the fixed body with the same key: %s", r.Body)
	assert.EqualValues(t, 2, runs.Load(), "the fixed body runs")
}

// An answer too large to keep as it is (over 300 KB: an AgenticPM project
// or event, a rez_agent message near DynamoDB's 400 KB item limit, which
// their 1 MB and 512 KB request bodies allow) is kept compressed, and one
// too large even so keeps the key without its body: either way a retry
// with the key runs nothing. Before, such an answer released the key, so
// a client whose first answer was lost created a second project.
func TestLargeAnswersNeverRunTwice(t *testing.T) {
	random := func(n int) string {
		b := make([]byte, n*3/4)
		_, _ = rand.Read(b)
		return base64.StdEncoding.EncodeToString(b)
	}
	for _, tc := range []struct {
		name     string
		value    string
		location string
		// kept: the replay is the first answer; else 409 conflict with
		// the first answer's Location.
		kept bool
	}{
		{"350 KB that compresses", strings.Repeat(`{"task":"write the plan"},`, 350<<10/26), "/things/t1", true},
		{"390 KB of random base64, an item near the limit", random(390 << 10), "/things/t1", true},
		{"1 MB of random base64, too large even compressed", random(1 << 20), "/things/t1", false},
		{"450 KB of random base64 and a 70 KB Location: over the item limit", random(450 << 10), "/things/" + strings.Repeat("x", 70<<10), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, _ := keys(t)
			var runs atomic.Int32
			h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				runs.Add(1)
				w.Header().Set("Location", tc.location)
				api.WriteJSON(w, http.StatusCreated, map[string]string{"id": "t1", "config": tc.value})
			}))
			first := post(h, "k", `{}`)
			require.Equal(t, http.StatusCreated, first.Code, "first")
			r := post(h, "k", `{}`)
			assert.EqualValues(t, 1, runs.Load(), "retry: runs")
			assert.Equal(t, tc.location, r.Header().Get("Location"), "retry: the first answer's Location")
			if tc.kept {
				assert.Equal(t, http.StatusCreated, r.Code, "retry: the kept 201")
				assert.Equal(t, "true", r.Header().Get("Idempotent-Replayed"), "retry: replayed")
				assert.Equal(t, "application/json", r.Header().Get("Content-Type"), "retry: Content-Type")
				assert.True(t, bytes.Equal(first.Body.Bytes(), r.Body.Bytes()), "retry: the first body (%d bytes, the replay %d)", first.Body.Len(), r.Body.Len())
				return
			}
			require.Equal(t, http.StatusConflict, r.Code, "retry of an answer not kept")
			assert.Contains(t, r.Body.String(), `"code":"conflict"`, "retry of an answer not kept: code")
			assert.Contains(t, r.Body.String(), "too large", "retry of an answer not kept: says why")
			assert.Empty(t, r.Header().Get("Idempotent-Replayed"), "retry of an answer not kept: not a replay")
		})
	}
}

// A handler that panics after it answered a success (a bug in what runs
// after the write) did its work, and the client got that answer: the key
// keeps it, as for any success, so a retry replays it instead of running
// again. A panic before any answer still releases the key
// (TestPanicReleasesTheKey).
func TestPanicAfterASuccessKeepsTheAnswer(t *testing.T) {
	tbl, _ := keys(t)
	var runs atomic.Int32
	h := tbl.Middleware(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := runs.Add(1)
		api.WriteJSON(w, http.StatusCreated, map[string]string{"id": "t" + strconv.Itoa(int(n))})
		if n == 1 {
			panic("after the answer")
		}
	}))
	require.PanicsWithValue(t, "after the answer", func() { post(h, "k", `{}`) }, "the middleware passes the panic on to the recovery")
	r := post(h, "k", `{}`)
	assert.Equal(t, http.StatusCreated, r.Code, "retry: the first answer")
	assert.Equal(t, "true", r.Header().Get("Idempotent-Replayed"), "retry: replayed")
	assert.Equal(t, `{"id":"t1"}`+"\n", r.Body.String(), "retry: the first body")
	assert.EqualValues(t, 1, runs.Load(), "retry runs nothing")
}
