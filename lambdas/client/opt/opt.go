// Package opt reads and fills the optional fields of the generated
// clients' types. oapi-codegen writes an optional field as a pointer (a
// list as *[]T, a nested object as a pointer to an anonymous struct), so a
// caller would otherwise check nil before every read and could not name
// a nested object's type to build it.
package opt

// Value is *p, or T's zero value when the field is absent (p is nil):
// an absent list reads as empty, an absent string as "".
func Value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// Set points *p at a new zero T and returns it, for a nested object of a
// request body whose type is anonymous:
//
//	opt.Set(&body.Message).Title = new("hello")
func Set[T any](p **T) *T {
	*p = new(T)
	return *p
}
