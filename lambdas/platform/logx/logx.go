// Package logx is the structured logging every service shares: JSON lines on
// one writer, with the request id of the context attached to every record so
// a single request can be followed across log lines without threading a logger
// through every call.
package logx

import (
	"context"
	"io"
	"log/slog"
)

type requestIDKey struct{}

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
	return slog.New(Handler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})})
}

// Handler adds the request id of the record's context to each record.
type Handler struct{ slog.Handler }

// Handle implements slog.Handler.
func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler; it keeps the wrapper so derived loggers
// still carry request ids.
func (h Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return Handler{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h Handler) WithGroup(name string) slog.Handler {
	return Handler{h.Handler.WithGroup(name)}
}
