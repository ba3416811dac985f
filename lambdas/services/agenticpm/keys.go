package agenticpm

import (
	"crypto/rand"
	"encoding/binary"
	"io"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Key attribute names and constant key values (docs/schemas/agenticpm.md,
// "Items").
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	attrTTL    = "TTL"
	gsi1       = "GSI1"

	skMetadata        = "METADATA"
	skConfig          = "CONFIG"
	pkGlobal          = "GLOBAL"
	pkAgent           = "AGENT"
	prefixArtefact    = "ARTEFACT#"
	prefixEvent       = "EVENT#"
	prefixEscalation  = "ESCALATION#"
	prefixAction      = "ACTION#"
	prefixCheckpoint  = "CHECKPOINT#"
	prefixConfig      = "CONFIG#"
	prefixStatus      = "STATUS#"
	prefixProject     = "PROJECT#"
	prefixIntegration = "INTEGRATION#"
)

// keys are the key attributes of an item; every stored entity embeds them.
// TTL is epoch seconds, zero for entities that never expire.
type keys struct {
	PK     string `dynamodbav:"PK" json:"-"`
	SK     string `dynamodbav:"SK" json:"-"`
	GSI1PK string `dynamodbav:"GSI1PK,omitempty" json:"-"`
	GSI1SK string `dynamodbav:"GSI1SK,omitempty" json:"-"`
	TTL    int64  `dynamodbav:"TTL,omitempty" json:"-"`
}

func projectPK(id string) string                 { return prefixProject + id }
func statusGSI1PK(s ProjectStatus) string        { return prefixStatus + string(s) }
func escalationGSI1PK(s EscalationStatus) string { return prefixEscalation + string(s) }
func eventDateGSI1PK(date string) string         { return prefixEvent + date }

// dateOf is the UTC date of a Timestamp, the GSI1 partition of its events.
func dateOf(ts string) string { return ts[:len("2006-01-02")] }

// expiry is the TTL value of an item created at t.
func expiry(t time.Time, d time.Duration) int64 { return t.Add(d).Unix() }

// newULID returns a ULID (48-bit millisecond time, 80 random bits, 26
// Crockford base32 characters), the unique suffix of event and action keys.
// The go.mod has no ULID module; this is the whole algorithm minus
// monotonic mode, which the <ts># in front of it makes unnecessary.
func newULID(t time.Time, random io.Reader) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	if _, err := io.ReadFull(random, b[6:]); err != nil {
		// crypto/rand.Reader does not fail (Go 1.24+).
		panic("agenticpm: read random bytes: " + err.Error())
	}
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func defaultULID(t time.Time) string { return newULID(t, rand.Reader) }

var (
	ulidPattern = regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}$`)
	// keyPartPattern bounds caller-chosen key parts (checkpoint integration
	// and key, agent config key): never '#', which separates key parts,
	// never '/', which separates path segments, and a leading alphanumeric
	// so "." and ".." cannot be one.
	keyPartPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)
	// typeNamePattern is the shape of event and action types
	// (heartbeat, signal_detected, email_sent, …): an open set.
	typeNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// validUUID reports whether s is a canonical lowercase UUID, the only form
// the service generates; anything else cannot name an item.
func validUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && len(s) == 36 && u.String() == s
}

func validULID(s string) bool { return ulidPattern.MatchString(s) }

func validKeyPart(s string) bool {
	return utf8.RuneCountInString(s) <= MaxIdentifierChars && keyPartPattern.MatchString(s)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
