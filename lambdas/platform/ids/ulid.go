// ULIDs (github.com/ulid/spec): a 48-bit millisecond
// timestamp and 80 random bits in 26 Crockford base32 characters, so ids
// made in different milliseconds sort by time as strings.
//
// Services use them as the unique suffix of sort keys that already start
// with a timestamp, which is why there is no monotonic mode: the timestamp
// in front orders the items, the random bits only keep two items of one
// instant apart. The go.mod has no ULID module; this is the whole algorithm.

package ids

import (
	"crypto/rand"
	"encoding/binary"
	"io"
	"strings"
	"time"
)

// ULIDLen is the length of a ULID.
const ULIDLen = 26

// crockford is the ULID alphabet: no I, L, O, U, so ids read aloud safely.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewULID returns a ULID for t with random bits from crypto/rand.
func NewULID(t time.Time) string { return NewULIDFrom(t, rand.Reader) }

// NewULIDFrom returns a ULID for t with random bits read from random. It
// panics when random fails: crypto/rand.Reader does not (Go 1.24+), so a
// reader that does is a programming error.
func NewULIDFrom(t time.Time, random io.Reader) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	if _, err := io.ReadFull(random, b[6:]); err != nil {
		panic("ulid: read random bytes: " + err.Error())
	}
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	var out [ULIDLen]byte
	// The top two of the 130 bits are zero.
	for i := ULIDLen - 1; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// ValidULID reports whether s is a ULID in canonical (upper case) form: 26
// characters of the alphabet, the first 0-7 (26 characters of 5 bits hold
// 130 bits, so the first carries only the top three bits of the
// timestamp). A loop, not a regular expression: compiling one at init cost
// every function that links this package 0.1 ms of its cold start.
func ValidULID(s string) bool {
	if len(s) != ULIDLen || s[0] > '7' {
		return false
	}
	for i := range len(s) {
		if strings.IndexByte(crockford, s[i]) < 0 {
			return false
		}
	}
	return true
}

// ULIDTime returns the millisecond a valid ULID was made for; false for
// anything else. Services use it to find an item whose sort key starts
// with the same instant at a finer precision.
func ULIDTime(s string) (time.Time, bool) {
	if !ValidULID(s) {
		return time.Time{}, false
	}
	var ms uint64
	for i := range 10 { // 10 characters hold the 48-bit timestamp (50 bits)
		ms = ms<<5 | uint64(strings.IndexByte(crockford, s[i]))
	}
	return time.UnixMilli(int64(ms)).UTC(), true
}
