package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/localtrace"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Server timeouts: a client that sends its headers or body slowly, or
// never reads the answer, holds a connection this long at most. The
// write timeout exceeds any function's timeout (at most 15 minutes in
// Lambda; the templates' are seconds), which answers first.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 60 * time.Second
	writeTimeout      = 16 * time.Minute
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
)

// newServer is the runner's HTTP server: handler behind localOnly, with
// the timeouts above.
func newServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           localOnly(h, log),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// localOnly refuses what a web page the developer visits could send to
// the runner (which creates messages, sends them to a real NTFY_URL if
// set, and triggers schedules):
//
//   - a Host that is not loopback (127.0.0.0/8, ::1, localhost): a DNS
//     rebinding page reaches 127.0.0.1 under its own name;
//   - a cross-origin request: an Origin that is not a loopback http(s)
//     origin (or "null"), or Sec-Fetch-Site cross-site or same-site;
//   - a write (POST, PUT, PATCH, DELETE) with a body that is not JSON:
//     text/plain, form and multipart bodies are what a page may send
//     without a CORS preflight.
//
// Each is a 403 (415 for the content type) in the platform's error shape,
// before any handler runs. curl, tests and same-origin tools send none of
// these, and no CORS header is ever answered, so a page can never read an
// answer either.
func localOnly(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkLocal(r); err != nil {
			log.Warn("refused a request that is not local", "method", r.Method, "path", r.URL.Path, "host", r.Host,
				"origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"), "reason", err.Message)
			api.WriteError(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func checkLocal(r *http.Request) *api.Error {
	if !loopbackHost(r.Host) {
		return api.Forbidden("host %q is not loopback: the local runner answers only 127.0.0.1, [::1] and localhost", api.Truncate(r.Host, 64))
	}
	if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		return api.Forbidden("cross-origin request from %q refused: the local runner serves only same-origin and non-browser clients", api.Truncate(o, 64))
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return api.Forbidden("Sec-Fetch-Site %q refused: the local runner serves only same-origin and non-browser clients", api.Truncate(site, 32))
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
			return nil // no body (a test, a release, a schedule run)
		}
		if !jsonType(r.Header.Get("Content-Type")) {
			return &api.Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
				Message: fmt.Sprintf("a %s with a body takes Content-Type: application/json (got %q)", r.Method, api.Truncate(r.Header.Get("Content-Type"), 64))}
		}
	}
	return nil
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Path == "" && loopbackHost(u.Host)
}

func jsonType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// withTimeout runs each invocation of a function's handler as Lambda
// behind API Gateway does: with a context whose deadline is the
// template's Timeout, the answer buffered, and past the timeout an answer
// of 502 {"message":"Internal server error"} (API Gateway's answer to a
// function error, a timeout included) while the handler is abandoned, as
// Lambda abandons the invocation.
func withTimeout(name string, timeout time.Duration, log *slog.Logger, h http.Handler, observe func(start time.Time, failed bool)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// Each request is an invocation with a trace of its own, as Lambda's
		// active tracing starts one for an HTTP API's (which passes none).
		ctx, cancel := context.WithTimeout(logx.WithInvocationTrace(r.Context(), localtrace.New()), timeout)
		defer cancel()
		buf := &bufferedResponse{header: http.Header{}}
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			h.ServeHTTP(buf, r.WithContext(ctx))
		}()
		select {
		case p := <-done:
			// A panic is a function error (the Lambda runtime reports the
			// invocation failed); an answer, whatever its status, is not.
			observe(start, p != nil)
			if p != nil {
				panic(p)
			}
			buf.copyTo(w)
		case <-ctx.Done():
			observe(start, true)
			log.Error("Task timed out", "function", name, "timeout", timeout.String(), "method", r.Method, "path", r.URL.Path)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte(`{"message":"Internal server error"}`))
		}
	})
}

// bufferedResponse holds a handler's answer until it is complete, as
// Lambda returns one whole response.
type bufferedResponse struct {
	mu     sync.Mutex
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedResponse) copyTo(w http.ResponseWriter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}
