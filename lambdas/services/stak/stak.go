// Package stak is the Stak multi-tenant notification inbox (design
// document 002, docs/schemas/stak.md): tenant settings, inbox configs,
// per-user and broadcast ("public") messages with read state, and
// estimated counters, all in one table (stak-inbox-<stage>).
//
// NewHandler is the HTTP API and Store the data access it uses; Consumer
// is the DynamoDB Streams consumer that decrements counters when messages
// and read receipts expire.
package stak

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
)

// Limits and defaults.
const (
	// MaxKeyLen bounds tenant, inbox, user and category keys, which all
	// end up in key attributes (2048 bytes for pk, 1024 for sk): the
	// platform's bound on every path key.
	MaxKeyLen = ids.MaxKeyBytes
	// MaxRecipients bounds the uids of one publish: each costs one
	// transaction.
	MaxRecipients = 100
	// DefaultPageSize and MaxPageSize bound feed pages (?limit=).
	DefaultPageSize = 20
	MaxPageSize     = 100
	// DefaultTTL applies when neither inbox nor tenant sets one.
	DefaultTTL = 30 * 24 * time.Hour
	// MaxTTL caps every TTL and every computed expiredat: the document
	// says 730 days in one place and 720 in another (decision 10).
	MaxTTL = 720 * 24 * time.Hour
	// MarkerTTL is the lifetime of stream dedupe markers: longer than the
	// 24 hours a stream keeps records (decision 4).
	MarkerTTL = 48 * time.Hour

	// MaxBodyBytes caps a message's body, as JSON: a feed page of
	// MaxPageSize messages then stays far below Lambda's 6 MB response
	// limit (MaxPageBytes bounds pages of older, larger items too).
	MaxBodyBytes = 16 << 10
	// MaxPageBytes bounds a feed page's JSON: a page stops early, with a
	// cursor, before it would exceed it. Lambda's limit on a response is
	// 6 MB, and API Gateway's payload carries the body as a JSON string,
	// in which every quote or backslash costs two bytes and a control
	// character six, so a page is measured as that escaped string.
	MaxPageBytes = 5 << 20

	maxRequestBodyBytes = 64 << 10
	maxTitleChars       = 200
	maxDescriptionChars = 2000
	maxURIChars         = 2048
	messageIDLen        = 19 // 9 base36 digits of milliseconds + 10 random
	// maxSchemas bounds the schemas of one inbox, as maxTTLs its TTLs;
	// the request's 64 KiB bounds their size.
	maxSchemas = 50
	maxTTLs    = 50
)

// Item kinds (the documented "kind" attribute).
const (
	kindSettings = "TS"
	kindInbox    = "IC"
	kindMessage  = "UM"
	kindStats    = "US"
	kindMarker   = "EM" // stream dedupe marker; not in the document
)

// Audience kinds.
const (
	AudienceUsers    = contract.AudienceUsers
	AudienceEveryone = contract.AudienceEveryone
)

// Errors of the store, with their HTTP answers where a handler can meet them.
var (
	ErrTenantNotFound = api.NewKind("stak: tenant not found", http.StatusNotFound, api.CodeNotFound,
		api.Says("tenant not found; PUT its settings first"))
	ErrInboxNotFound = api.NewKind("stak: inbox not found", http.StatusNotFound, api.CodeNotFound,
		api.Says("inbox not found; PUT its config first"))
	ErrMessageNotFound = api.NewKind("stak: message not found", http.StatusNotFound, api.CodeNotFound,
		api.Says("message not found (or expired)"))
	// ErrInvalidKey: a key part is empty, too long or contains '#'.
	ErrInvalidKey = errors.New("stak: invalid key")
	// ErrInvalidTTL: a TTL is not <n>d, <n>m or <n>s, or exceeds MaxTTL.
	ErrInvalidTTL = errors.New("stak: invalid ttl")
)

// cursorHint says what a cursor must come with.
const cursorHint = "pass next_cursor of the previous answer unchanged, for the same user, inbox and route"

// Partition is a parsed message partition key.
type Partition struct {
	Tenant, UID, Inbox string
}

// Public reports whether p is an inbox's public partition.
func (p Partition) Public() bool { return p.UID == contract.PublicUID }

// PK is the partition key of p.
func (p Partition) PK() string {
	if p.Public() {
		return contract.PublicPK(p.Tenant, p.Inbox)
	}
	return contract.UserPK(p.Tenant, p.UID, p.Inbox)
}

// ParsePartition parses t#<tenant>U#<uid>#<inbox> and
// t#<tenant>G#$public#<inbox>. There is no '#' between tenant and the
// U/G letter (decision 9); since key parts never contain '#', the letter
// is the last character before the first '#' after "t#".
func ParsePartition(pk string) (Partition, error) {
	rest, ok := strings.CutPrefix(pk, contract.PrefixTenant)
	head, tail, ok2 := strings.Cut(rest, "#")
	if !ok || !ok2 || len(head) < 2 {
		return Partition{}, fmt.Errorf("%w: %q is not a message partition", ErrInvalidKey, pk)
	}
	uid, inbox, ok := strings.Cut(tail, "#")
	p := Partition{Tenant: head[:len(head)-1], UID: uid, Inbox: inbox}
	letter := head[len(head)-1]
	switch {
	case !ok || inbox == "" || uid == "" || strings.Contains(inbox, "#"):
	case letter == 'G' && uid == contract.PublicUID, letter == 'U' && uid != contract.PublicUID:
		return p, nil
	}
	return Partition{}, fmt.Errorf("%w: %q is not a message partition", ErrInvalidKey, pk)
}

// checkKey reports why s cannot be a tenant, inbox, user or category key,
// or "" when it can: the platform's key rule (ids.CheckKey), which the
// router applies to every path key too, so a user id published to is one
// a feed path can name.
func checkKey(s string) string { return ids.CheckKey(s, MaxKeyLen) }

// newMessageID returns a fixed-width base36 millisecond timestamp followed
// by 10 random base36 digits: ids sort by time as strings, and the random
// part keeps ids of one millisecond unique across an inbox's user and
// public messages (a receipt relies on sharing its public message's id).
func newMessageID(now time.Time) string {
	ts := strconv.FormatInt(now.UnixMilli(), 36)
	var b [8]byte
	_, _ = rand.Read(b[:])        // never fails (crypto/rand panics instead)
	const span = 3656158440062976 // 36^10
	rnd := strconv.FormatUint(binary.BigEndian.Uint64(b[:])%span, 36)
	return strings.Repeat("0", 9-len(ts)) + ts + strings.Repeat("0", 10-len(rnd)) + rnd
}

// validMessageID: anything else cannot name a message, so it is a 404
// without a read.
func validMessageID(id string) bool {
	if len(id) != messageIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// ParseTTL parses the documented duration form: a positive integer and a
// unit d (days), m (minutes) or s (seconds), e.g. "30d", "300m", "6000s".
func ParseTTL(s string) (time.Duration, error) {
	if len(s) < 2 || len(s) > 12 {
		return 0, fmt.Errorf("%w: %q; use <n>d, <n>m or <n>s", ErrInvalidTTL, s)
	}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || n <= 0 || s[0] == '+' {
		return 0, fmt.Errorf("%w: %q; use <n>d, <n>m or <n>s with n > 0", ErrInvalidTTL, s)
	}
	var unit time.Duration
	switch s[len(s)-1] {
	case 'd':
		unit = 24 * time.Hour
	case 'm':
		unit = time.Minute
	case 's':
		unit = time.Second
	default:
		return 0, fmt.Errorf("%w: %q; the unit is d, m or s", ErrInvalidTTL, s)
	}
	if n > int64(MaxTTL/unit) {
		return 0, fmt.Errorf("%w: %q exceeds the maximum of 720d", ErrInvalidTTL, s)
	}
	return time.Duration(n) * unit, nil
}

// TenantSettings is the tenant settings object (TS).
type TenantSettings struct {
	Tenant string `dynamodbav:"tenant_key" json:"tenant_key"`
	Title  string `dynamodbav:"title" json:"title"`
	// TTL is the default message TTL, e.g. "30d"; "" means DefaultTTL.
	TTL string `dynamodbav:"ttl,omitempty" json:"ttl,omitempty"`
}

// InboxConfig is the inbox configuration object (IC).
type InboxConfig struct {
	Tenant      string `dynamodbav:"tenant_key" json:"tenant_key"`
	Inbox       string `dynamodbav:"inbox_key" json:"inbox_key"`
	Title       string `dynamodbav:"title" json:"title"`
	Description string `dynamodbav:"description" json:"description"`
	// TTL maps "default" and message types (taxonomy categories) to TTLs.
	TTL map[string]string `dynamodbav:"ttl,omitempty" json:"ttl,omitempty"`
	// Schema maps "default" and categories to a JSON Schema of
	// message.body, as TTL does to TTLs (docs/schemas/stak.md, "Message
	// schemas").
	Schema Schemas `dynamodbav:"schema,omitempty" json:"schema,omitempty"`
}

// Audiences names who a message is for.
type Audiences struct {
	Kind  string `dynamodbav:"kind" json:"kind"`
	Label string `dynamodbav:"label,omitempty" json:"label,omitempty"`
	// UIDs: in a user's copy only that user (decision 16).
	UIDs []string `dynamodbav:"uids,omitempty" json:"uids,omitempty"`
}

// Header is the document's outer "audiences" object (decision 8).
type Header struct {
	ID           string    `dynamodbav:"id" json:"id"`
	HostSystemID *string   `dynamodbav:"host_system_id" json:"host_system_id"`
	Sender       string    `dynamodbav:"sender" json:"sender"`
	Audiences    Audiences `dynamodbav:"audiences" json:"audiences"`
	Received     int64     `dynamodbav:"received" json:"received"`
	Delivered    int64     `dynamodbav:"delivered" json:"delivered"`
}

// Taxonomy groups messages.
type Taxonomy struct {
	Category string `dynamodbav:"category,omitempty" json:"category,omitempty"`
}

// Content is what the user reads.
type Content struct {
	Title  string  `dynamodbav:"title" json:"title"`
	Body   any     `dynamodbav:"body" json:"body"`
	CTAURI *string `dynamodbav:"cta_uri" json:"cta_uri"`
}

// Message is a stored message and its API form. Times are epoch seconds.
type Message struct {
	Kind      string   `dynamodbav:"kind" json:"kind"`
	Header    Header   `dynamodbav:"audiences" json:"audiences"`
	ReadAt    *int64   `dynamodbav:"readat,omitempty" json:"readat"`
	ExpiredAt int64    `dynamodbav:"expiredat" json:"expiredat"`
	Taxonomy  Taxonomy `dynamodbav:"taxonomy" json:"taxonomy"`
	Message   Content  `dynamodbav:"message" json:"message"`
	Tenant    string   `dynamodbav:"tenant_key" json:"tenant_key"`
	Inbox     string   `dynamodbav:"inbox_key" json:"inbox_key"`
	UID       string   `dynamodbav:"uid" json:"uid"`
}

// receipt is the read receipt of a public message in a user's partition:
// no kind, no content (document: "Read Receipt Object").
type receipt struct {
	// PK and SK are pk and sk: ddb.MarshalItem spells them.
	PK        string
	SK        string
	ReadAt    int64    `dynamodbav:"readat"`
	ExpiredAt int64    `dynamodbav:"expiredat"`
	Taxonomy  Taxonomy `dynamodbav:"taxonomy"`
}
