package ddb_test

import (
	"fmt"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
	assert.Equal(t, want, s, "sorted")
	back, err := ddb.ParseSortableTime(want[2])
	if assert.NoError(t, err, "ParseTime(%s)", want[2]) {
		assert.True(t, back.Equal(times[1]), "ParseTime(%s) = %v, want %v", want[2], back, times[1])
	}
}

func ExampleSortableTime() {
	fmt.Println(ddb.SortableTime(time.Date(2026, 2, 9, 12, 20, 25, 300_000_000, time.UTC)))
	// Output: 2026-02-09T12:20:25.300000Z
}
