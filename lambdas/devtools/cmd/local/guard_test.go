package main

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// What a web page the developer visits could send is refused before any
// handler runs; curl, the tests and same-origin tools are served.
func TestLocalOnly(t *testing.T) {
	ran := 0
	h := localOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran++ }), slog.New(slog.DiscardHandler))
	for _, tt := range []struct {
		name, method, host, body string
		header                   map[string]string
		status                   int
	}{
		{"curl GET", "GET", "127.0.0.1:8080", "", nil, 200},
		{"curl JSON POST", "POST", "127.0.0.1:8080", `{}`, map[string]string{"Content-Type": "application/json"}, 200},
		{"JSON with charset", "PUT", "localhost:8080", `{}`, map[string]string{"Content-Type": "application/json; charset=utf-8"}, 200},
		{"problem+json", "PATCH", "[::1]:8080", `{}`, map[string]string{"Content-Type": "application/merge-patch+json"}, 200},
		{"POST without a body", "POST", "127.0.0.1:8080", "", nil, 200},
		{"same-origin page", "POST", "127.0.0.1:8080", `{}`, map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-origin"}, 200},
		{"typed in the address bar", "GET", "localhost:8080", "", map[string]string{"Sec-Fetch-Site": "none"}, 200},
		{"DNS rebinding", "GET", "evil.example:8080", "", nil, 403},
		{"LAN address", "GET", "192.168.1.5:8080", "", nil, 403},
		{"no Host", "GET", "", "", nil, 403},
		{"cross-origin text/plain POST", "POST", "127.0.0.1:8080", `{"message_type":"x"}`, map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, 403},
		{"cross-origin, no Origin but Sec-Fetch-Site", "POST", "127.0.0.1:8080", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same-site subdomain", "GET", "127.0.0.1:8080", "", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"null origin (sandboxed frame)", "POST", "127.0.0.1:8080", "", map[string]string{"Origin": "null"}, 403},
		{"text/plain POST without an Origin", "POST", "127.0.0.1:8080", `{}`, map[string]string{"Content-Type": "text/plain"}, 415},
		{"form POST", "POST", "127.0.0.1:8080", `a=b`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"body without a type", "PUT", "127.0.0.1:8080", `{}`, nil, 415},
		{"multipart DELETE", "DELETE", "127.0.0.1:8080", `x`, map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, 415},
	} {
		ran = 0
		var body io.Reader
		if tt.body != "" {
			body = strings.NewReader(tt.body)
		}
		r := httptest.NewRequest(tt.method, "http://127.0.0.1:8080/rezagent/messages", body)
		r.Host = tt.host
		for k, v := range tt.header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, tt.status, w.Code, "%s: status; body %s", tt.name, w.Body)
		assert.Equal(t, tt.status == 200, ran == 1, "%s: handler ran %d times", tt.name, ran)
		if tt.status != 200 {
			assert.Contains(t, w.Body.String(), `"error"`, "%s: body", tt.name)
			assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"), "%s: Access-Control-Allow-Origin", tt.name)
		}
	}
}

// An invocation past the template's timeout answers as API Gateway does
// for a function error (502 {"message":"Internal server error"}), at the
// timeout; a handler sees the deadline; one in time is passed through
// whole.
func TestFunctionTimeout(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	release := make(chan struct{})
	defer close(release)
	var deadline time.Time
	// Each invocation is reported to the alarms: its duration, and whether
	// it failed (a timeout is a function error, a 201 is not).
	type invocation struct {
		took   time.Duration
		failed bool
	}
	var seen []invocation
	observe := func(start time.Time, failed bool) { seen = append(seen, invocation{time.Since(start), failed}) }
	slow := withTimeout("slow", 200*time.Millisecond, log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline, _ = r.Context().Deadline()
		w.WriteHeader(201)
		_, _ = w.Write([]byte("partial"))
		<-release // ignores its context, as a stuck handler would
	}), observe)
	start := time.Now()
	w := httptest.NewRecorder()
	slow.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	took := time.Since(start)
	assert.Equal(t, http.StatusBadGateway, w.Code, "timed out: status")
	assert.Equal(t, `{"message":"Internal server error"}`, w.Body.String(), "timed out: body")
	assert.GreaterOrEqual(t, took, 200*time.Millisecond, "timed out: answered after")
	assert.LessOrEqual(t, took, 2*time.Second, "timed out: answered after")
	assert.False(t, deadline.IsZero(), "the handler has no deadline")
	assert.LessOrEqual(t, deadline.Sub(start), 250*time.Millisecond, "the handler's deadline %v, want the timeout after %v", deadline, start)
	fast := withTimeout("fast", time.Second, log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Thing", "1")
		w.WriteHeader(201)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}), observe)
	w = httptest.NewRecorder()
	fast.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	assert.Equal(t, 201, w.Code, "in time: status")
	assert.Equal(t, `{"ok":true}`, w.Body.String(), "in time: body")
	assert.Equal(t, "1", w.Header().Get("X-Thing"), "in time: header X-Thing")
	require.Len(t, seen, 2, "invocations reported")
	assert.True(t, seen[0].failed, "timed out: a function error")
	assert.GreaterOrEqual(t, seen[0].took, 200*time.Millisecond, "timed out: duration")
	assert.False(t, seen[1].failed, "in time: no function error")
}

// The server bounds how long a slow client may hold a connection.
func TestServerTimeouts(t *testing.T) {
	s := newServer(http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	assert.Positive(t, s.ReadHeaderTimeout, "ReadHeaderTimeout")
	assert.Positive(t, s.ReadTimeout, "ReadTimeout")
	assert.Positive(t, s.WriteTimeout, "WriteTimeout")
	assert.Positive(t, s.IdleTimeout, "IdleTimeout")
	assert.Positive(t, s.MaxHeaderBytes, "MaxHeaderBytes")
}
