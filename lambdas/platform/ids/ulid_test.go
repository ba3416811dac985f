package ids_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"testing/iotest"
	"time"

	"github.com/dynastack/dynastack/lambdas/platform/ids"
)

func TestNew(t *testing.T) {
	at := time.Date(2026, 2, 4, 10, 0, 0, 0, time.UTC)
	a, b := ids.NewULID(at), ids.NewULID(at.Add(time.Millisecond))
	if !ids.ValidULID(a) || !ids.ValidULID(b) || a[:10] >= b[:10] || a == ids.NewULID(at) {
		t.Errorf("ULIDs %s %s", a, b)
	}
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
		if got := ids.NewULIDFrom(tt.at, tt.rand); got != tt.want || !ids.ValidULID(got) {
			t.Errorf("NewFrom(%d ms) = %s, want %s", tt.at.UnixMilli(), got, tt.want)
		}
	}
}

func TestNewFromFailingReader(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a failing reader")
		}
	}()
	ids.NewULIDFrom(time.Now(), iotest.ErrReader(errors.New("broken")))
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
		if got := ids.ValidULID(s); got != want {
			t.Errorf("Valid(%q) = %v, want %v", s, got, want)
		}
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
		if !ok || !got.Equal(at.Truncate(time.Millisecond)) {
			t.Errorf("Time(New(%v)) = %v, %v", at, got, ok)
		}
	}
	for _, bad := range []string{"", "not-a-ulid", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01arz3ndektsv4rrffq69g5fav"} {
		if _, ok := ids.ULIDTime(bad); ok {
			t.Errorf("Time(%q) ok", bad)
		}
	}
}
