// Package logx is the structured logging every service shares: JSON lines on
// one writer, with the request id of the context attached to every record so
// a single request can be followed across log lines without threading a logger
// through every call.
package logx

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
)

type (
	requestIDKey         struct{}
	callerKey            struct{}
	clientIDKey          struct{}
	correlationIDKey     struct{}
	clientCorrelationKey struct{}
)

// Where Lambda puts the X-Ray trace header of an invocation:
// aws-lambda-go stores it in the invocation's context under this (string)
// key, and in the environment variable when the execution environment
// runs one invocation at a time (AWS_LAMBDA_MAX_CONCURRENCY unset or 1:
// lambda/invoke_loop.go of aws-lambda-go v1.55).
const (
	lambdaTraceKey = "x-amzn-trace-id"
	// EnvTraceID is the environment variable of the trace header.
	EnvTraceID = "_X_AMZN_TRACE_ID"
	// TraceHeaderName is the HTTP header an X-Ray trace header travels
	// in, between services (the SDK's recursion detection sends it to
	// AWS, SNS keeps it for the subscribed queue, an invoke of Lambda
	// takes it), and the one the processor sends to ntfy.
	TraceHeaderName = "X-Amzn-Trace-Id"
	// AWSTraceHeader is the SQS system attribute that carries a
	// message's trace header (SNS to SQS, SendMessage): an SQS record's
	// Attributes[AWSTraceHeader].
	AWSTraceHeader = "AWSTraceHeader"
	// maxTraceHeader bounds a header taken from elsewhere (X-Ray's own
	// headers are under 100 bytes; Lineage adds a few dozen).
	maxTraceHeader = 256
)

type traceKey struct{}

// WithTrace returns a context whose work continues the trace of header
// (an X-Ray trace header, "Root=1-…;Parent=…;Sampled=1"): the trace a
// queue record carries in AWSTraceHeader, which fn.QueueBatch gives each
// record's handler. A malformed header changes nothing. Records logged
// with the context carry its Root as trace_id, and an AWS call made with
// it sends it as X-Amzn-Trace-Id (platform/awsconf).
func WithTrace(ctx context.Context, header string) context.Context {
	if !ValidTraceHeader(header) {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, header)
}

// WithInvocationTrace returns ctx as aws-lambda-go makes an invocation's
// context: header is the invocation's trace header (what Lambda sends the
// runtime as Lambda-Runtime-Trace-Id). For emulators of Lambda that call
// a handler in their own process (the local runner, tests); a function in
// Lambda gets it from aws-lambda-go.
func WithInvocationTrace(ctx context.Context, header string) context.Context {
	//lint:ignore SA1029 the key is aws-lambda-go's, a plain string
	return context.WithValue(ctx, lambdaTraceKey, header)
}

// TraceHeader returns the X-Ray trace header of the work ctx belongs to:
// the one WithTrace set (a queue record's), else the Lambda invocation's
// (aws-lambda-go's context value, else the environment variable, Lambda's
// other copy of the same header), or "" outside both. Only a well-formed
// header is returned (ValidTraceHeader).
func TraceHeader(ctx context.Context) string {
	if h, _ := ctx.Value(traceKey{}).(string); h != "" {
		return h
	}
	return invocationTraceHeader(ctx)
}

func invocationTraceHeader(ctx context.Context) string {
	h, _ := ctx.Value(lambdaTraceKey).(string)
	if h == "" {
		h = os.Getenv(EnvTraceID)
	}
	if !ValidTraceHeader(h) {
		return ""
	}
	return h
}

// TraceID returns the X-Ray trace id (the Root of the trace header,
// 1-5759e988-bd862e3fe1be46a994272793) of the work ctx belongs to
// (TraceHeader), or "" outside one.
func TraceID(ctx context.Context) string { return traceRoot(TraceHeader(ctx)) }

// ValidTraceHeader reports whether h is an X-Ray trace header that may be
// logged and passed on as a header value: at most 256 bytes of printable
// ASCII without spaces, with a Root of the form 1-<8 hex digits>-<24 hex
// digits>.
func ValidTraceHeader(h string) bool {
	if h == "" || len(h) > maxTraceHeader {
		return false
	}
	for i := 0; i < len(h); i++ {
		if h[i] <= ' ' || h[i] > '~' {
			return false
		}
	}
	return traceRoot(h) != ""
}

// traceRoot is the Root of header h when it is an X-Ray trace id.
func traceRoot(h string) string {
	for part := range strings.SplitSeq(h, ";") {
		root, ok := strings.CutPrefix(part, "Root=")
		if ok && validRoot(root) {
			return root
		}
	}
	return ""
}

// validRoot: "1-", 8 hex digits (the epoch second), "-", 24 hex digits.
func validRoot(r string) bool {
	if len(r) != 35 || r[:2] != "1-" || r[10] != '-' {
		return false
	}
	for i, c := range []byte(r) {
		if i < 2 || i == 10 {
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// WithCorrelationID returns a context whose log records carry id under
// "correlation_id": the id one unit of work (a message) keeps across
// functions, to follow it from an API call to its last effect.
func WithCorrelationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, correlationIDKey{}, id)
}

// CorrelationID returns the correlation id of ctx, or "" if there is none.
func CorrelationID(ctx context.Context) string {
	id, _ := ctx.Value(correlationIDKey{}).(string)
	return id
}

// WithCaller returns a context whose log records name the caller (an IAM
// ARN or a token subject) under "caller".
func WithCaller(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callerKey{}, id)
}

// WithClientRequestID returns a context whose log records carry the id a
// client sent (X-Request-Id), under "client_request_id": the client's, to
// search by, never the request id itself.
func WithClientRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, clientIDKey{}, id)
}

// WithClientCorrelationID returns a context whose log records carry the
// correlation id a client sent (X-Correlation-Id), under
// "client_correlation_id": the client's, to search by, never the
// correlation id itself (any caller could send another's and join its
// work).
func WithClientCorrelationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, clientCorrelationKey{}, id)
}

// WithRequestID returns a context carrying the request (correlation) id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id of ctx, or "" if there is none.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// New returns a JSON logger writing to w. Records logged with a *Context
// method carry the request_id of that context.
func New(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(Handler{Handler: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})})
}

// SetDefault makes l the default logger of a Lambda function and of the
// log package. What reaches the log package there is aws-lambda-go
// reporting a failed invocation (or its runtime API client failing), so it
// is logged at ERROR: at slog's default INFO bridge level the error-level
// alarms and log filters of a function would miss it.
func SetDefault(l *slog.Logger) {
	slog.SetDefault(l)
	slog.SetLogLoggerLevel(slog.LevelError)
}

// Handler adds the request id, caller, client request and correlation ids,
// correlation id and X-Ray trace id (trace_id: the Root of TraceHeader;
// invocation_trace_id beside it when a queue record's trace is not its
// invocation's) of the record's context to each record, and keeps the
// first of logger attributes with the same key.
//
// Why the first: a Lambda main names its logger's service once
// (fn.Main), and a service's constructor derives its own logger
// from the default with the same key; slog's JSON handler would write both,
// and a JSON line with a key twice is read differently by each log tool.
type Handler struct {
	slog.Handler
	// keys are the top-level attribute keys added with WithAttrs; grouped
	// is set once WithGroup opened a group.
	keys    []string
	grouped bool
}

// Handle implements slog.Handler.
func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if id, _ := ctx.Value(callerKey{}).(string); id != "" {
		r.AddAttrs(slog.String("caller", id))
	}
	if id, _ := ctx.Value(clientIDKey{}).(string); id != "" {
		r.AddAttrs(slog.String("client_request_id", id))
	}
	if id, _ := ctx.Value(clientCorrelationKey{}).(string); id != "" {
		r.AddAttrs(slog.String("client_correlation_id", id))
	}
	if id := CorrelationID(ctx); id != "" {
		r.AddAttrs(slog.String("correlation_id", id))
	}
	// TraceHeader, with the invocation's header read once (every line
	// pays for it).
	inv := invocationTraceHeader(ctx)
	th, _ := ctx.Value(traceKey{}).(string)
	if th == "" {
		th = inv
	}
	if th != "" {
		id := traceRoot(th)
		r.AddAttrs(slog.String("trace_id", id))
		// A record that continues its message's trace inside an
		// invocation with a trace of its own (a batch of several
		// messages): the invocation's too, where X-Ray shows this
		// function's own segment.
		if inv != "" && inv != th {
			if invID := traceRoot(inv); invID != id {
				r.AddAttrs(slog.String("invocation_trace_id", invID))
			}
		}
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler; it keeps the wrapper so derived loggers
// still carry request ids, and drops an attribute whose key the logger
// already has.
func (h Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if h.grouped {
		// Inside a group a key is qualified by it and cannot repeat a
		// top-level one.
		return Handler{Handler: h.Handler.WithAttrs(attrs), keys: h.keys, grouped: true}
	}
	keys := slices.Clone(h.keys)
	kept := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		if slices.Contains(keys, a.Key) {
			continue
		}
		keys = append(keys, a.Key)
		kept = append(kept, a)
	}
	return Handler{Handler: h.Handler.WithAttrs(kept), keys: keys}
}

// WithGroup implements slog.Handler.
func (h Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return Handler{Handler: h.Handler.WithGroup(name), keys: h.keys, grouped: true}
}
