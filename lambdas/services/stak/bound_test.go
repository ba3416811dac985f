package stak

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dynastack/dynastack/constructs/stak/contract"
)

// A bound includes exactly what it names: the id itself and older, or
// everything delivered up to the end of the second.
func TestBoundStart(t *testing.T) {
	sec := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	id := newMessageID(sec.Add(500 * time.Millisecond))
	for _, tc := range []struct {
		name   string
		b      Bound
		sk     string
		inside bool
	}{
		{"the id itself", Bound{UpTo: id}, contract.PrefixMessage + id, true},
		{"an older id", Bound{UpTo: id}, contract.PrefixMessage + newMessageID(sec), true},
		{"a newer id", Bound{UpTo: id}, contract.PrefixMessage + newMessageID(sec.Add(time.Second)), false},
		{"first ms of the second", Bound{UpToTime: sec.Unix()}, contract.PrefixMessage + newMessageID(sec), true},
		{"last ms of the second", Bound{UpToTime: sec.Unix()}, contract.PrefixMessage + newMessageID(sec.Add(999*time.Millisecond)), true},
		{"next second", Bound{UpToTime: sec.Unix()}, contract.PrefixMessage + newMessageID(sec.Add(time.Second)), false},
		{"no bound", Bound{}, contract.PrefixMessage + newMessageID(sec.Add(time.Hour)), true},
	} {
		start := tc.b.start()
		// A descending walk from start takes the sort keys below it; ""
		// starts at the top.
		assert.Equal(t, tc.inside, start == "" || tc.sk < start, "%s: %s inside %q", tc.name, tc.sk, start)
	}
}
