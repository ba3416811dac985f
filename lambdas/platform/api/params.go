package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/uuid"
)

// CanonicalUUID reports whether s is a UUID in canonical form (lower case,
// hyphenated), the only form the services generate: any other spelling of
// the same UUID would name an item that does not exist.
func CanonicalUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && len(s) == 36 && u.String() == s
}

// PathUUID returns the path value name when it is a [CanonicalUUID].
// Anything else cannot name an item, so it is a 404 `<noun> "<value>" not
// found` without a DynamoDB call (which would also refuse keys over 2048
// bytes with an error that is no client's fault).
func PathUUID(r *http.Request, name, noun string) (string, error) {
	id := r.PathValue(name)
	if !CanonicalUUID(id) {
		return "", NotFound("%s %q not found", noun, Truncate(id, 64))
	}
	return id, nil
}

// PageLimit reads the page size ?limit=: def when the parameter is absent,
// else an integer from 1 to max. Given but empty or out of range is
// recorded on v, since silently serving another page size would hide a
// client's bug.
func PageLimit(v *Validator, q url.Values, def, max int) int {
	if !q.Has("limit") {
		return def
	}
	n, err := strconv.Atoi(q.Get("limit"))
	if err != nil || n < 1 || n > max {
		v.Add("limit", "must be an integer from 1 to %d", max)
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
