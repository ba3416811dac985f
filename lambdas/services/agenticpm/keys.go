package agenticpm

import (
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
)

// keys are the key attributes of an item; every stored entity embeds them.
// TTL is epoch seconds, zero for entities that never expire. The fields
// are named as the contract's attributes in upper case, and items are
// marshalled with ddb.MarshalItem and keyAttrs, which spells them as the
// contract does.
type keys struct {
	PK     string `json:"-"`
	SK     string `json:"-"`
	GSI1PK string `dynamodbav:",omitempty" json:"-"`
	GSI1SK string `dynamodbav:",omitempty" json:"-"`
	TTL    int64  `dynamodbav:",omitempty" json:"-"`
}

// keyAttrs are the attributes of keys.
var keyAttrs = []string{contract.AttrPK, contract.AttrSK, contract.AttrGSI1PK, contract.AttrGSI1SK, contract.AttrTTL}

// dateOf is the UTC date of a Timestamp, the GSI1 partition of its events.
func dateOf(ts string) string { return ts[:len("2006-01-02")] }

// expiry is the TTL value of an item created at t.
func expiry(t time.Time, d time.Duration) int64 { return t.Add(d).Unix() }

var (
	// keyPartPattern bounds caller-chosen key parts (checkpoint integration
	// and key, agent config key): never '#', which separates key parts,
	// never '/', which separates path segments, and a leading alphanumeric
	// so "." and ".." cannot be one.
	keyPartPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)
	// typeNamePattern is the shape of event and action types
	// (heartbeat, signal_detected, email_sent, …): an open set.
	typeNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

func validKeyPart(s string) bool {
	return utf8.RuneCountInString(s) <= MaxIdentifierChars && keyPartPattern.MatchString(s)
}
