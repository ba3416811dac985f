package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
)

// Error codes of the error body. They are stable API: clients switch on them.
const (
	CodeBadRequest       = "bad_request"
	CodeValidation       = "validation_failed"
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeConflict         = "conflict"
	CodeTooLarge         = "too_large"
	// CodeUnsupportedMediaType: a body labelled other than application/json
	// (415).
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeInternal             = "internal"
	// CodeUnavailable: a dependency (DynamoDB) could not serve the request
	// now; the answer is 503 with Retry-After, and the same request may be
	// sent again after it.
	CodeUnavailable = "unavailable"
)

// FieldError names one invalid input field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an error that is safe to show to a client.
type Error struct {
	Status  int          `json:"-"`
	Code    string       `json:"code"`
	Message string       `json:"message"`
	Fields  []FieldError `json:"fields,omitempty"`
	// Err is the cause, logged but never sent.
	Err error `json:"-"`
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

func newError(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400 for input that cannot be parsed.
func BadRequest(format string, args ...any) *Error {
	return newError(http.StatusBadRequest, CodeBadRequest, format, args...)
}

// Forbidden is a 403: the caller is known but may not do this.
func Forbidden(format string, args ...any) *Error {
	return newError(http.StatusForbidden, CodeForbidden, format, args...)
}

// NotFound is a 404.
func NotFound(format string, args ...any) *Error {
	return newError(http.StatusNotFound, CodeNotFound, format, args...)
}

// Conflict is a 409: the request is valid but the resource's state forbids it.
func Conflict(format string, args ...any) *Error {
	return newError(http.StatusConflict, CodeConflict, format, args...)
}

// TooLarge is a 413.
func TooLarge(format string, args ...any) *Error {
	return newError(http.StatusRequestEntityTooLarge, CodeTooLarge, format, args...)
}

// Invalid is a 400 naming the invalid fields; the message names them too, so
// a client that shows only the message still tells the user what to fix.
func Invalid(fields ...FieldError) *Error {
	msgs := make([]string, len(fields))
	for i, f := range fields {
		msgs[i] = f.Field + ": " + f.Message
	}
	return &Error{
		Status:  http.StatusBadRequest,
		Code:    CodeValidation,
		Message: strings.Join(msgs, "; "),
		Fields:  fields,
	}
}

type errorBody struct {
	Error     *Error `json:"error"`
	RequestID string `json:"request_id,omitempty"`
}

// WriteError writes err as the JSON error body, bounded (at most
// MaxFieldErrors fields, names cut at MaxEchoChars, at most
// MaxErrorBodyBytes in all). An *Error (anywhere in the
// chain) is sent as is and a [Coded] error as it says (see [ErrorFor]);
// anything else is logged and answered with a generic 500 so that table
// names, SDK messages and stack details stay server-side.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	apiErr := bounded(ErrorFor(err))
	ctx := r.Context()
	if apiErr.Status >= 500 {
		logger(ctx).ErrorContext(ctx, "request failed", "status", apiErr.Status, "error", err.Error())
	} else if apiErr.Err != nil {
		logger(ctx).InfoContext(ctx, "request rejected", "status", apiErr.Status, "error", err.Error())
	}
	if apiErr.Status == http.StatusServiceUnavailable {
		// Whole seconds (RFC 9110): what the client's own retries would
		// otherwise guess.
		w.Header().Set("Retry-After", strconv.Itoa(int(ddb.RetryAfter/time.Second)))
		countUnavailable(ctx)
	}
	WriteJSON(w, apiErr.Status, errorBody{Error: apiErr, RequestID: logx.RequestID(ctx)})
}

// WriteJSON writes v as a JSON response with the given status. HTML is not
// escaped: the body is application/json with nosniff, so "<" needs no
// \u003c, which would cost six bytes for one and change what a client that
// compares bytes sees.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := Marshal(v)
	if err != nil {
		// Only a programming error (an unmarshalable type) gets here.
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"internal error"}}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Reply ends a handler: it returns err for the router to answer, or writes
// v with status when err is nil. [About] and [CursorHint] keep a nil error
// nil, so a handler can pass what its store returned through them:
//
//	page, err := h.store.List(ctx, q)
//	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, hint))
func Reply(w http.ResponseWriter, status int, v any, err error) error {
	if err != nil {
		return err
	}
	WriteJSON(w, status, v)
	return nil
}

// Marshal is v as WriteJSON sends it: JSON without HTML escaping, ending in
// a newline. Services measure response sizes with it.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// countUnavailable emits one Unavailable metric in CloudWatch's embedded
// metric format: a log line Lambda's log group turns into a metric, by
// the logger's service attribute (the function's name). The 5xx alarm
// subtracts these answers (infra/stacks, alarmServerErrors).
func countUnavailable(ctx context.Context) {
	metrics.Count(ctx, logger(ctx), service.Unavailable)
}
