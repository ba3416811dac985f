package api

import (
	"cmp"
	"errors"
	"net/http"
	"strings"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Coded is a domain error that knows how it is answered over HTTP. Domain
// packages declare the answer next to the failure (see [Kind]), and
// [WriteError] finds it anywhere in an error's chain, so no service keeps a
// switch translating its errors and the mapping is written here once.
type Coded interface {
	error
	HTTPStatus() int
	ErrorCode() string
	// PublicMessage is what the client reads. id is the resource the
	// handler named with [About] ("" when none); err is the whole chain,
	// whose wrapped detail some messages quote (see [Detail]).
	PublicMessage(id string, err error) string
}

// Kind is a sentinel error that is [Coded]. Its Error text is what logs and
// errors.Is see; the client reads its public message, which may differ.
type Kind struct {
	text    string
	status  int
	code    string
	message func(id string, err error) string
	fields  []FieldError
}

// NewKind declares a sentinel answered with status and code; message
// writes the client's message (see [Says] for a fixed one).
func NewKind(text string, status int, code string, message func(id string, err error) string) *Kind {
	return &Kind{text: text, status: status, code: code, message: message}
}

// InvalidKind declares a sentinel answered like [Invalid] with fields:
// a domain rule that reads as a field error to the client.
func InvalidKind(text string, fields ...FieldError) *Kind {
	k := &Kind{text: text, status: http.StatusBadRequest, code: CodeValidation, fields: fields}
	k.message = Says(Invalid(fields...).Message)
	return k
}

func (k *Kind) Error() string     { return k.text }
func (k *Kind) HTTPStatus() int   { return k.status }
func (k *Kind) ErrorCode() string { return k.code }

// PublicMessage implements [Coded].
func (k *Kind) PublicMessage(id string, err error) string { return k.message(id, err) }

// Says is a public message that does not depend on the request.
func Says(msg string) func(string, error) string {
	return func(string, error) string { return msg }
}

// Detail is what err says beyond the text of the sentinel it wraps: for
// fmt.Errorf("%w: 5 items", sentinel) it is "5 items". It takes the text,
// not the sentinel, so a Kind's own message func can call it.
func Detail(err error, sentinelText string) string {
	return strings.TrimPrefix(err.Error(), sentinelText+": ")
}

// scoped carries what the handler knows and a domain error does not.
type scoped struct {
	err        error
	id         string
	cursorHint string
}

func (s *scoped) Error() string { return s.err.Error() }
func (s *scoped) Unwrap() error { return s.err }

// About names the resource (the path's id) err is about, for public
// messages that quote it. A nil err stays nil.
func About(err error, id string) error {
	if err == nil {
		return nil
	}
	return &scoped{err: err, id: id}
}

// CursorHint makes an invalid page cursor in err a 400 whose message is
// "invalid cursor; " + hint: what the client must pass along with it differs
// per listing. A nil err stays nil.
func CursorHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &scoped{err: err, cursorHint: hint}
}

// ErrorFor is err as the client sees it: the *Error in its chain; else,
// under [CursorHint], an invalid cursor; else the answer of the first
// [Coded] error in it; else, for [ddb.ErrItemTooLarge], a 413; else a
// generic 500 whose cause is kept for the log only.
func ErrorFor(err error) *Error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	var id, hint string
	for e := err; e != nil; e = errors.Unwrap(e) {
		if s, ok := e.(*scoped); ok {
			id, hint = cmp.Or(id, s.id), cmp.Or(hint, s.cursorHint)
		}
	}
	if hint != "" && errors.Is(err, ddb.ErrInvalidCursor) {
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: "invalid cursor; " + hint, Err: err}
	}
	if ddb.IsUnavailable(err) {
		// Throttled, failing or unreachable after the client's retries:
		// the client's request was fine and may be sent again.
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
			Message: "the service is busy or its database is unavailable; retry after the Retry-After header's seconds", Err: err}
	}
	var c Coded
	if !errors.As(err, &c) && errors.Is(err, ddb.ErrItemTooLarge) {
		// A service that names what was too large wraps this in its own
		// Kind, which errors.As finds first.
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge, Message: "the item would exceed DynamoDB's 400 KB item size limit", Err: err}
	}
	if c != nil {
		e := &Error{Status: c.HTTPStatus(), Code: c.ErrorCode(), Message: c.PublicMessage(id, err), Err: err}
		if k, ok := c.(*Kind); ok {
			e.Fields = k.fields
		}
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error", Err: err}
}
