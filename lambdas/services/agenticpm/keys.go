package agenticpm

import (
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
)

// Key attribute names and constant key values (docs/schemas/agenticpm.md,
// "Items").
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	attrTTL    = "TTL"
	gsi1       = contract.IndexGSI1

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
