package api_test

import (
	"net/http"
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
