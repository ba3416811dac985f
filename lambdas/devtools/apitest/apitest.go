// Package apitest is the HTTP side of the services' tests: requests sent
// straight to a handler, their responses, the platform/api error body, and
// a deterministic clock. It imports testing and is meant for _test files
// only.
package apitest

import (
	"encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Response is what a handler answered.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v and fails the test when it cannot.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "response %d %s", r.Status, r.Body)
}

// ErrorBody is the JSON body of an error response (platform/api).
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Fields  []struct {
			Field, Message string
		} `json:"fields"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

// Do sends a request to h; an empty body sends none, and headers are name,
// value pairs.
func Do(t testing.TB, h http.Handler, method, path, body string, headers ...string) Response {
	t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return Response{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
}

// WantError checks an error response: its status, its code, a request_id
// that matches the X-Request-Id header, and, when given, the field the
// body names (in fields and in the message) and a fragment of the message.
func WantError(t testing.TB, r Response, status int, code, field, inMessage string) {
	t.Helper()
	require.Equal(t, status, r.Status, "status; body %s", r.Body)
	var e ErrorBody
	r.JSON(t, &e)
	assert.Equal(t, code, e.Error.Code, "code (%s)", r.Body)
	assert.NotEmpty(t, e.RequestID, "request_id (%s)", r.Body)
	assert.Equal(t, r.Header.Get("X-Request-Id"), e.RequestID, "request_id against the X-Request-Id header")
	if field != "" {
		var named []string
		for _, f := range e.Error.Fields {
			named = append(named, f.Field)
		}
		assert.Contains(t, named, field, "fields the error names: %s", r.Body)
		assert.Contains(t, e.Error.Message, field, "error message names the field: %s", r.Body)
	}
	if inMessage != "" {
		assert.Contains(t, e.Error.Message, inMessage, "error message")
	}
}

// Clock is a deterministic clock for a service's Now: every reading
// advances it by a fixed step, so timestamps of one test are distinct and
// ordered. It is safe for concurrent use.
type Clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

// NewClock returns a clock whose first reading is start + step.
func NewClock(start time.Time, step time.Duration) *Clock {
	return &Clock{t: start, step: step}
}

// Now advances the clock by its step and returns the new time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// Set moves the clock to t; the next reading is t + step.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock forward by d, besides the step of the next
// reading.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
