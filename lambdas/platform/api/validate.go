package api

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dynastack/dynastack/constructs/service"
)

// Validator collects field errors so a client learns about every invalid
// field of a request at once.
//
//	var v api.Validator
//	v.Text("caller_id", in.CallerID, 1, 128)
//	if err := v.Err(); err != nil { return err }
type Validator struct {
	fields []FieldError
	// more counts the invalid fields beyond MaxFieldErrors.
	more int
}

// Add records an invalid field. The name is cut at MaxEchoChars (it may be
// a caller's: a map key, a parameter), and past MaxFieldErrors fields only
// the count is kept, so no request can make its error large.
func (v *Validator) Add(field, format string, args ...any) {
	if len(v.fields) >= MaxFieldErrors {
		v.more++
		return
	}
	v.fields = append(v.fields, FieldError{Field: Truncate(field, maxEchoChars), Message: Truncate(fmt.Sprintf(format, args...), maxFieldMessageChars)})
}

// Text checks that s is valid UTF-8, not blank when min > 0, between min and
// max characters long, and free of control characters other than newline
// and tab. Lengths count characters, not bytes, because that is what a user
// typed; callers that care about storage bound bytes separately.
func (v *Validator) Text(field, s string, min, max int) {
	switch n := utf8.RuneCountInString(s); {
	case !utf8.ValidString(s):
		v.Add(field, "must be valid UTF-8")
	case min > 0 && strings.TrimSpace(s) == "":
		v.Add(field, "is required")
	case n < min:
		v.Add(field, "must be at least %d characters", min)
	case n > max:
		v.Add(field, "must be at most %d characters (got %d)", max, n)
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' }):
		v.Add(field, "must not contain control characters")
	}
}

// Identifier checks a single-line identifier: Text without whitespace.
func (v *Validator) Identifier(field, s string, max int) {
	before := len(v.fields)
	v.Text(field, s, 1, max)
	if len(v.fields) == before && strings.ContainsFunc(s, unicode.IsSpace) {
		v.Add(field, "must not contain whitespace")
	}
}

// MaxBytes checks that s is at most max bytes long, for limits that a
// store counts in bytes. A field already reported invalid is not reported
// twice.
func (v *Validator) MaxBytes(field, s string, max int) {
	if len(s) > max && !v.has(field) {
		v.Add(field, "must be at most %d bytes of UTF-8 (got %d)", max, len(s))
	}
}

func (v *Validator) has(field string) bool {
	field = Truncate(field, maxEchoChars)
	for _, f := range v.fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// Strings converts a set of string-kinded values (a status enum) for
// [Validator.OneOf].
func Strings[S ~string](set []S) []string {
	out := make([]string, len(set))
	for i, s := range set {
		out[i] = string(s)
	}
	return out
}

// OneOf checks that s is one of allowed.
func (v *Validator) OneOf(field, s string, allowed ...string) {
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	if s == "" {
		v.Add(field, "is required; one of %s", strings.Join(allowed, ", "))
		return
	}
	v.Add(field, "must be one of %s", strings.Join(allowed, ", "))
}

// Err returns the collected errors as a 400 *Error, or nil.
func (v *Validator) Err() error {
	if len(v.fields) == 0 {
		return nil
	}
	e := Invalid(v.fields...)
	if v.more > 0 {
		more := fmt.Sprintf("; and %d more invalid fields", v.more)
		e.Message = Truncate(e.Message, maxMessageChars-len(more)-1) + more
	}
	return e
}

// Query returns the query of r and records a problem for every parameter
// the route does not take or that is given twice: a misspelt ?stauts=
// must not silently list everything. A query string that does not parse is
// a problem too, since url.Values drops what it cannot parse and a mangled
// cursor would then silently restart from the first page.
func (v *Validator) Query(r *http.Request, allowed ...service.QueryParam) url.Values {
	if n := queryParams(r.URL.RawQuery); n > MaxQueryParams {
		v.Add("query", "has %d parameters; at most %d (allowed: %s)", n, MaxQueryParams, names(allowed))
		return url.Values{}
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		v.Add("query", "is not a valid query string (percent-encode the values)")
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		switch {
		case !slices.Contains(allowed, service.QueryParam(k)):
			v.Add(k, "unknown query parameter; allowed: %s", names(allowed))
		case len(q[k]) > 1:
			v.Add(k, "must be given at most once")
		}
	}
	return q
}

// names lists params for a message: "caller, cursor".
func names(params []service.QueryParam) string {
	s := make([]string, len(params))
	for i, p := range params {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// Truncate shortens caller input echoed in an error message to n
// characters, so a huge or hostile value cannot bloat the answer or logs.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
