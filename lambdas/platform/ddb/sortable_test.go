package ddb_test

import (
	"fmt"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"sort"
	"testing"
	"time"
)

func TestTimeSortsAsString(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 2, 9, 12, 0, 0, 340_000_000, time.UTC),
		time.Date(2026, 2, 9, 12, 0, 0, 300_000_000, time.UTC),
		time.Date(2026, 2, 9, 13, 0, 0, 0, time.FixedZone("CET", 3600)), // 12:00:00 UTC
		time.Date(2026, 2, 9, 12, 0, 0, 1000, time.UTC),
	}
	var s []string
	for _, tm := range times {
		s = append(s, ddb.SortableTime(tm))
	}
	sort.Strings(s)
	want := []string{"2026-02-09T12:00:00.000000Z", "2026-02-09T12:00:00.000001Z", "2026-02-09T12:00:00.300000Z", "2026-02-09T12:00:00.340000Z"}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Errorf("sorted %v, want %v", s, want)
	}
	back, err := ddb.ParseSortableTime(want[2])
	if err != nil || !back.Equal(times[1]) {
		t.Errorf("ParseTime(%s) = %v, %v", want[2], back, err)
	}
}

func ExampleSortableTime() {
	fmt.Println(ddb.SortableTime(time.Date(2026, 2, 9, 12, 20, 25, 300_000_000, time.UTC)))
	// Output: 2026-02-09T12:20:25.300000Z
}
