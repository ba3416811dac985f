package api

import (
	"strings"
)

// Bounds on what a request may make the platform do or say, once for
// every service (docs/functions.md, "HTTP API").
const (
	// MaxQueryParams is the most query parameters a request may carry;
	// more is one 400 naming "query", before anything is parsed into a
	// map (the widest route takes 6).
	MaxQueryParams = 20
	// MaxFieldErrors is the most invalid fields an error lists; the
	// message says how many more there were.
	MaxFieldErrors = 10
	// MaxEchoChars bounds every caller-chosen name (a field, a key, a
	// parameter) echoed in an error.
	MaxEchoChars = maxEchoChars
	// maxFieldMessageChars and maxMessageChars bound the texts of an error.
	maxFieldMessageChars = 200
	maxMessageChars      = 1000
	// MaxErrorBodyBytes bounds an error body whatever a service put in the
	// error: over it, the fields are left out (the message names them).
	MaxErrorBodyBytes = 8 << 10
	// MaxEpochSeconds is the latest epoch second a request may name
	// (9999-12-31T23:59:59Z): later ones overflow millisecond arithmetic
	// (9.2e15 s) and are no time anything happens.
	MaxEpochSeconds = 253402300799
)

// EpochSeconds checks a caller's epoch-seconds value: 0 to MaxEpochSeconds.
func (v *Validator) EpochSeconds(field string, n int64) {
	if n < 0 || n > MaxEpochSeconds {
		v.Add(field, "must be epoch seconds from 0 to %d (9999-12-31T23:59:59Z)", int64(MaxEpochSeconds))
	}
}

// queryParams counts the parameters of a raw query without parsing it.
func queryParams(raw string) int {
	if raw == "" {
		return 0
	}
	return strings.Count(raw, "&") + 1
}

// bounded returns e within the limits above: at most MaxFieldErrors
// fields, each name and text cut, the message cut, and no fields at all
// when the body would still exceed MaxErrorBodyBytes. e itself is not
// changed (it may be a shared value).
func bounded(e *Error) *Error {
	out := *e
	out.Message = Truncate(e.Message, maxMessageChars)
	if len(e.Fields) > 0 {
		n := min(len(e.Fields), MaxFieldErrors)
		out.Fields = make([]FieldError, n)
		for i, f := range e.Fields[:n] {
			out.Fields[i] = FieldError{Field: Truncate(f.Field, maxEchoChars), Message: Truncate(f.Message, maxFieldMessageChars)}
		}
	}
	if b, err := Marshal(out); err == nil && len(b) > MaxErrorBodyBytes-512 {
		out.Fields = nil
	}
	return &out
}
