package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
)

// Request id headers: X-Request-Id is ours in answers; in requests both are
// the client's (read in this order).
const (
	HeaderRequestID     = "X-Request-Id"
	HeaderCorrelationID = "X-Correlation-Id"
)

// Instrument wraps h with what every service needs around a request: a
// request id, echoed in X-Request-Id; the caller and the client's own id
// on every log line; one access log line; and recovery from panics into a
// JSON 500.
//
// The request id is the API Gateway request id (lambdahttp puts it in the
// context), which the gateway's access log carries too, or a fresh one
// where there is no gateway (tests, make dev). It is never the client's:
// a client's X-Request-Id (else X-Correlation-Id), when sane (ValidID), is
// logged as client_request_id, so a client can be found by its id without
// choosing ours (two clients sending the same id would otherwise merge
// their requests in every search). The correlation id is the request id
// too, for the same reason, and the client's X-Correlation-Id is logged as
// client_correlation_id.
//
// When h is a Router, each answer is also measured as the function's
// service.RouteLatency (one EMF line: the time, the route's key, the
// status class), which the per-route alarms and graphs read.
//
// The result is Routed when h is.
func Instrument(log *slog.Logger, h http.Handler) http.Handler {
	var routes *routeLatency
	if rt, ok := h.(*Router); ok {
		routes = newRouteLatency(rt.fn)
	}
	fn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx := r.Context()
		id := logx.RequestID(ctx)
		if id == "" {
			id = uuid.NewString()
			ctx = logx.WithRequestID(ctx, id)
		}
		if client := ClientRequestID(r); client != "" {
			ctx = logx.WithClientRequestID(ctx, client)
		}
		// The correlation id (what the request's work keeps beyond it, a
		// message through a queue to its last effect) is ours: a caller's
		// X-Correlation-Id could be another caller's and join its work in
		// every search (issue 29). The caller's is logged beside it.
		ctx = logx.WithCorrelationID(ctx, id)
		if corr := r.Header.Get(HeaderCorrelationID); ids.ValidID(corr) {
			ctx = logx.WithClientCorrelationID(ctx, corr)
		}
		if c, ok := CallerFrom(ctx); ok && c.ID() != "" {
			ctx = logx.WithCaller(ctx, c.ID())
		}
		ctx = WithLogger(ctx, log)
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
			logRequest(ctx, log, r, sw, start)
			if routes != nil {
				routes.emit(ctx, log, r, sw.status, start)
			}
		}()
		h.ServeHTTP(sw, r)
	})
	if routed, ok := h.(Routed); ok {
		return instrumented{HandlerFunc: fn, Routed: routed}
	}
	return fn
}

// logRequest writes the request's access line. It hands the record to
// the logger's handler itself, with typed attributes: slog's Logger
// methods would box each value and walk the stack for a source location
// the JSON handler does not write (no AddSource). The line is still a
// fifth to a quarter of a request's own CPU (docs/functions.md, "Request
// path"): it is what operations and support search by.
func logRequest(ctx context.Context, log *slog.Logger, r *http.Request, sw *statusWriter, start time.Time) {
	h := log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("method", r.Method), slog.String("route", routeOf(r)), slog.String("path", r.URL.Path),
		slog.Int("status", sw.status), slog.Int("bytes", sw.bytes),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
	_ = h.Handle(ctx, rec)
}

type instrumented struct {
	http.HandlerFunc
	Routed
}

// ClientRequestID is the id the client sent in X-Request-Id, else
// X-Correlation-Id, when it is sane (ValidID); "" otherwise.
func ClientRequestID(r *http.Request) string {
	for _, h := range []string{HeaderRequestID, HeaderCorrelationID} {
		if id := r.Header.Get(h); ids.ValidID(id) {
			return id
		}
	}
	return ""
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

// routeOf is the pattern that served r ("GET /tickets/{id}"), the same
// name as API Gateway's routeKey; "" when none matched.
func routeOf(r *http.Request) string { return r.Pattern }

// routeLatency measures each answer of one function as its
// service.RouteLatency.
type routeLatency struct {
	metric service.Metric
	// keys maps a ServeMux pattern to the route's key (API Gateway's
	// routeKey): they differ for a greedy parameter ("{arn+}").
	keys map[string]string
}

func newRouteLatency(fn service.Function) *routeLatency {
	keys := make(map[string]string, len(fn.Routes))
	for _, r := range fn.Routes {
		keys[r.Pattern()] = r.Key()
	}
	return &routeLatency{metric: service.RouteLatency(fn), keys: keys}
}

// emit writes the measurement of r, answered with status since start. A
// request no route matched is the dimension's OtherValue; a handler that
// wrote nothing answered 200.
func (m *routeLatency) emit(ctx context.Context, log *slog.Logger, r *http.Request, status int, start time.Time) {
	route, ok := m.keys[routeOf(r)]
	if !ok {
		route = service.OtherValue
	}
	if status == 0 {
		status = http.StatusOK
	}
	metrics.Emit(ctx, log, m.metric, float64(time.Since(start).Microseconds())/1000, route, service.StatusClass(status))
}
