package itsm

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSummaryProjection: the listing's projection, written out, reads
// every attribute of a Summary and no other, each placeholder named in
// summaryNames and every name used.
func TestSummaryProjection(t *testing.T) {
	var want []string
	st := reflect.TypeFor[Summary]()
	for i := range st.NumField() {
		want = append(want, strings.Split(st.Field(i).Tag.Get("dynamodbav"), ",")[0])
	}
	var got []string
	for _, p := range strings.Split(summaryProjection, ", ") {
		name, ok := summaryNames[p]
		if !ok {
			t.Errorf("placeholder %s of the projection is not in summaryNames", p)
		}
		got = append(got, name)
	}
	if len(got) != len(summaryNames) {
		t.Errorf("the projection uses %d of the %d names", len(got), len(summaryNames))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("projected %v, a Summary has %v", got, want)
	}
}
