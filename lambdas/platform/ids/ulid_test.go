package ids_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"testing/iotest"
	"time"

	"github.com/dynastack/dynastack/lambdas/platform/ids"
	"github.com/stretchr/testify/assert"
)

func TestNew(t *testing.T) {
	at := time.Date(2026, 2, 4, 10, 0, 0, 0, time.UTC)
	a, b := ids.NewULID(at), ids.NewULID(at.Add(time.Millisecond))
	assert.True(t, ids.ValidULID(a), "ULID %s", a)
	assert.True(t, ids.ValidULID(b), "ULID %s", b)
	assert.Less(t, a[:10], b[:10], "the time part sorts by time")
	assert.NotEqual(t, a, ids.NewULID(at), "two ULIDs of the same millisecond")
}

func TestNewFrom(t *testing.T) {
	zeros := bytes.NewReader(make([]byte, 10))
	ones := bytes.NewReader(bytes.Repeat([]byte{0xff}, 10))
	tests := []struct {
		at   time.Time
		rand *bytes.Reader
		want string
	}{
		{time.UnixMilli(0), zeros, "00000000000000000000000000"},
		{time.UnixMilli(1<<48 - 1), ones, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		// The spec's example timestamp.
		{time.UnixMilli(1469918176385), bytes.NewReader(make([]byte, 10)), "01ARYZ6S410000000000000000"},
	}
	for _, tt := range tests {
		got := ids.NewULIDFrom(tt.at, tt.rand)
		assert.Equal(t, tt.want, got, "NewFrom(%d ms)", tt.at.UnixMilli())
		assert.True(t, ids.ValidULID(got), "NewFrom(%d ms) = %s: valid", tt.at.UnixMilli(), got)
	}
}

func TestNewFromFailingReader(t *testing.T) {
	assert.Panics(t, func() { ids.NewULIDFrom(time.Now(), iotest.ErrReader(errors.New("broken"))) }, "no panic for a failing reader")
}

func TestValid(t *testing.T) {
	for s, want := range map[string]bool{
		"01ARYZ6S410000000000000000":  true,
		"7ZZZZZZZZZZZZZZZZZZZZZZZZZ":  true,
		"8ZZZZZZZZZZZZZZZZZZZZZZZZZ":  false, // beyond 48 bits of time
		"01aryz6s410000000000000000":  false,
		"01ARYZ6S41000000000000000I":  false,
		"01ARYZ6S41000000000000000":   false,
		"01ARYZ6S4100000000000000000": false,
		"":                            false,
	} {
		assert.Equal(t, want, ids.ValidULID(s), "Valid(%q)", s)
	}
}

func ExampleNewULIDFrom() {
	at := time.Date(2026, 2, 4, 10, 0, 0, 0, time.UTC)
	fmt.Println(ids.NewULIDFrom(at, bytes.NewReader(make([]byte, 10))))
	// Output: 01KGM1GC800000000000000000
}

func TestTime(t *testing.T) {
	for _, at := range []time.Time{time.UnixMilli(0), time.Date(2026, 11, 26, 3, 4, 5, 678_901_234, time.UTC), time.UnixMilli(1<<48 - 1)} {
		got, ok := ids.ULIDTime(ids.NewULID(at))
		if assert.True(t, ok, "Time(New(%v))", at) {
			assert.True(t, got.Equal(at.Truncate(time.Millisecond)), "Time(New(%v)) = %v", at, got)
		}
	}
	for _, bad := range []string{"", "not-a-ulid", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01arz3ndektsv4rrffq69g5fav"} {
		_, ok := ids.ULIDTime(bad)
		assert.False(t, ok, "Time(%q) ok", bad)
	}
}
