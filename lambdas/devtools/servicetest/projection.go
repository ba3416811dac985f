package servicetest

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// CheckProjection fails t unless projection, a written-out projection
// ("#a, #b, …" with its placeholders in names), reads exactly the
// attributes (dynamodbav names) of T's fields that served keeps (nil
// keeps all; a field it drops is one the item has but the API never
// returns) and uses every entry of names. others are placeholders that
// the same request's other expressions (a key condition, a filter) take
// from names: each must be there.
func CheckProjection[T any](t testing.TB, projection string, names map[string]string, served func(reflect.StructField) bool, others ...string) {
	t.Helper()
	var want []string
	st := reflect.TypeFor[T]()
	for i := range st.NumField() {
		if f := st.Field(i); served == nil || served(f) {
			tag, _ := f.Tag.Lookup("dynamodbav")
			want = append(want, strings.Split(tag, ",")[0])
		}
	}
	var got []string
	for _, p := range strings.Split(projection, ", ") {
		assert.Contains(t, names, p, "placeholder %s of the projection: in its names", p)
		got = append(got, names[p])
	}
	for _, p := range others {
		assert.Contains(t, names, p, "placeholder %s of the request's other expressions: in the projection's names", p)
	}
	assert.Len(t, got, len(names), "the projection's placeholders: one for each of its names")
	slices.Sort(want)
	slices.Sort(got)
	assert.Equal(t, want, got, "projected attributes")
}
