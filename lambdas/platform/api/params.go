package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
)

// PathValue returns the value of the route's path parameter p. The router
// has checked it is a key ([CheckKey]) before the handler runs. A handler
// reads its parameters by the contract's constants, never by a string of
// its own, so a parameter renamed in the contract cannot leave a handler
// reading "" from a name the route no longer has.
func PathValue(r *http.Request, p service.PathParam) string { return r.PathValue(string(p)) }

// PathUUID returns the value of the path parameter p when it is a
// [CanonicalUUID]. Anything else cannot name an item, so it is a 404
// `<noun> "<value>" not found` without a DynamoDB call (which would also
// refuse keys over 2048 bytes with an error that is no client's fault).
func PathUUID(r *http.Request, p service.PathParam, noun string) (string, error) {
	id := PathValue(r, p)
	if !ids.CanonicalUUID(id) {
		return "", NotFound("%s %q not found", noun, Truncate(id, 64))
	}
	return id, nil
}

// Location is the Location of an item a request created: the route that
// reads it, with its path values (service.Route.URL), relative (no leading
// '/'), so it resolves under whatever prefix the API is mounted at (the
// local runner's /<service>/, a stage path in API Gateway).
func Location(route service.Route, values ...string) string {
	return strings.TrimPrefix(route.URL(values...), "/")
}

// QueryValues are a request's query parameters, read by the contract's
// names. The router has already refused a parameter the route does not
// take and one given twice.
type QueryValues struct{ v url.Values }

// QueryOf parses r's query once, for a handler that reads several
// parameters.
func QueryOf(r *http.Request) QueryValues { return QueryValues{r.URL.Query()} }

// Get returns the value of p, "" when absent.
func (q QueryValues) Get(p service.QueryParam) string { return q.v.Get(string(p)) }

// Has reports whether p is given, even empty.
func (q QueryValues) Has(p service.QueryParam) bool { return q.v.Has(string(p)) }

// Cursor returns the value of ?cursor= ([service.Cursor]): the
// next_cursor of the previous page, "" for the first.
func (q QueryValues) Cursor() string { return q.Get(service.Cursor) }

// Query returns the value of r's query parameter p, "" when absent: for a
// handler that reads one parameter (QueryOf parses once for several).
func Query(r *http.Request, p service.QueryParam) string { return QueryOf(r).Get(p) }

// PageLimit reads the page size ?limit= ([service.Limit]): def when the
// parameter is absent, else an integer from 1 to max. Given but empty or
// out of range is recorded on v, since silently serving another page size
// would hide a client's bug.
func PageLimit(v *Validator, q QueryValues, def, max int) int {
	if !q.Has(service.Limit) {
		return def
	}
	n, err := strconv.Atoi(q.Get(service.Limit))
	if err != nil || n < 1 || n > max {
		v.Add(service.Limit.String(), "must be an integer from 1 to %d", max)
		return def
	}
	return n
}

// Optional is a request field that may be absent, null or set. PATCH and
// optional fields need the difference, which a pointer loses (null and
// absent both leave it nil).
type Optional[T any] struct {
	Set, Null bool
	V         T
}

// UnmarshalJSON implements json.Unmarshaler; it runs only for a field the
// body has.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.V)
}

// Present reports whether the field is set to a value. null is recorded
// on v as invalid rather than read as absent, so a client cannot believe it
// cleared a field.
func (o Optional[T]) Present(v *Validator, field string) bool {
	if o.Null {
		v.Add(field, "must not be null; omit it instead")
		return false
	}
	return o.Set
}

// Ptr is the value of a set field and nil for an absent one; null is
// recorded on v as in [Optional.Present].
func (o Optional[T]) Ptr(v *Validator, field string) *T {
	if !o.Present(v, field) {
		return nil
	}
	return &o.V
}
