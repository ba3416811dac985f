package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/google/uuid"

	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Request id headers. X-Request-Id is read first and always echoed.
const (
	HeaderRequestID     = "X-Request-Id"
	HeaderCorrelationID = "X-Correlation-Id"
)

// Instrument wraps h with what every service needs around a request: a
// request id (taken from the caller when it sent a sane one, so a trace
// spans services; generated otherwise), echoed in X-Request-Id; one access
// log line; and recovery from panics into a JSON 500.
//
// The result is Routed when h is.
func Instrument(log *slog.Logger, h http.Handler) http.Handler {
	fn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := incomingID(r)
		ctx := WithLogger(logx.WithRequestID(r.Context(), id), log)
		r = r.WithContext(ctx)
		w.Header().Set(HeaderRequestID, id)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.ErrorContext(ctx, "panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if sw.status == 0 {
					WriteError(sw, r, fmt.Errorf("panic: %v", p))
				}
			}
			log.InfoContext(ctx, "request",
				"method", r.Method, "path", r.URL.Path, "status", sw.status,
				"bytes", sw.bytes, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		}()
		h.ServeHTTP(sw, r)
	})
	if routed, ok := h.(Routed); ok {
		return instrumented{HandlerFunc: fn, Routed: routed}
	}
	return fn
}

type instrumented struct {
	http.HandlerFunc
	Routed
}

func incomingID(r *http.Request) string {
	for _, h := range []string{HeaderRequestID, HeaderCorrelationID} {
		if id := r.Header.Get(h); ValidID(id) {
			return id
		}
	}
	return uuid.NewString()
}

// ValidID reports whether a caller-chosen id (request or correlation id) is
// safe to log and echo: printable ASCII, at most 128 bytes, so it cannot
// inject into logs or headers.
func ValidID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
