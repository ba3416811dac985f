package stak

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The table is cut into segments of about DriftSampleItems items, within
// DynamoDB's 1 to 1,000,000; a fire time always picks the same segment,
// and successive hours spread over them.
func TestDriftSegments(t *testing.T) {
	for items, want := range map[int64]int{0: 1, 1: 1, DriftSampleItems: 1, DriftSampleItems + 1: 2, 10_000: 50, 1 << 40: 1_000_000} {
		assert.Equal(t, want, segments(items), "segments of %d items", items)
	}
	fire := time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC)
	assert.Equal(t, segmentOf(fire, 50), segmentOf(fire.In(time.FixedZone("x", 3600)), 50), "one fire, one segment")
	seen := map[int]bool{}
	for h := range 500 {
		s := segmentOf(fire.Add(time.Duration(h)*time.Hour), 50)
		assert.True(t, s >= 0 && s < 50, "segment %d of 50", s)
		seen[s] = true
	}
	assert.Len(t, seen, 50, "500 hourly fires reach every one of 50 segments")
}
