package servicetest

import (
	"reflect"
	"slices"
	"strings"
	"testing"
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
		name, ok := names[p]
		if !ok {
			t.Errorf("placeholder %s of the projection is not in its names", p)
		}
		got = append(got, name)
	}
	for _, p := range others {
		if _, ok := names[p]; !ok {
			t.Errorf("%s is not in the projection's names", p)
		}
	}
	if len(got) != len(names) {
		t.Errorf("the projection uses %d of the %d names", len(got), len(names))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("projected %v, want %v", got, want)
	}
}
