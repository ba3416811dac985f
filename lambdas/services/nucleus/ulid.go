package nucleus

import (
	"encoding/binary"
	"io"
	"time"
)

// crockford is the ULID alphabet: no I, L, O, U, so ids read aloud safely.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newULID returns a ULID (48-bit millisecond time, 80 random bits, 26
// Crockford base32 characters). It is the unique suffix of audit sort keys:
// the timestamp in front of it already orders entries, the 80 random bits
// keep two entries of one instant apart.
func newULID(t time.Time, random io.Reader) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	if _, err := io.ReadFull(random, b[6:]); err != nil {
		// crypto/rand.Reader does not fail (Go 1.24+); another reader that
		// does is a programming error.
		panic("nucleus: read random bytes: " + err.Error())
	}
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	// 26 characters of 5 bits hold 130 bits: the top two are zero.
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
