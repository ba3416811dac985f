// Package nucleus is the Nucleus platform service (design document 001):
// AWS accounts, start/stop schedules and the resources a schedule targets,
// kept in NucleusAppTable-<stage> (single-table design), and an immutable
// 30-day audit log in NucleusAuditTable-<stage>.
//
// Every change is one TransactWriteItems that carries its audit entry, so
// the log never misses a change and never records one that did not happen.
//
// The HTTP API is built by NewHandler; Store is the data access it uses and
// can be used on its own. docs/schemas/nucleus.md describes both.
package nucleus

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Limits. Names are index sort keys (at most 1,024 bytes) and ARNs are
// table sort keys behind "RESOURCE#"; the byte bounds keep both legal.
const (
	MaxNameChars        = 128
	MaxNameBytes        = 512
	MaxRoleARNBytes     = 2048
	MaxResourceARNBytes = 1024 - len(contract.PrefixResource)
	MaxCronChars        = 256
	MaxUserIDBytes      = 512
	MaxDetailsBytes     = 16 << 10
	DefaultPageSize     = 50
	MaxPageSize         = 100
	// Retention is how long audit entries live (expire_at = write + 30 days).
	Retention = 30 * 24 * time.Hour

	maxRequestBodyBytes = 64 << 10
	// maxRounds bounds the queries behind one page when a filter drops
	// items, so one request cannot scan a whole partition.
	maxRounds = 10
	// updateAttempts bounds the read-modify-write retries of a PATCH that
	// loses a race.
	updateAttempts = 3
)

// Timestamp formats t as the service stores times: fixed-width UTC, so that
// string order is time order (audit sort keys compare as strings).
func Timestamp(t time.Time) string { return ddb.SortableTime(t) }

// Errors of the store, with their HTTP answers where a handler can meet them.
var (
	// ErrAccountNotFound: no account with that id.
	ErrAccountNotFound = api.NewKind("nucleus: account not found", http.StatusNotFound, api.CodeNotFound,
		func(id string, _ error) string { return fmt.Sprintf("account %q not found", id) })
	// ErrAccountExists: an account with that id is already registered.
	ErrAccountExists = api.NewKind("nucleus: account already exists", http.StatusConflict, api.CodeConflict,
		func(id string, _ error) string { return fmt.Sprintf("account %q is already registered", id) })
	// ErrScheduleNotFound: no schedule with that id.
	ErrScheduleNotFound = api.NewKind("nucleus: schedule not found", http.StatusNotFound, api.CodeNotFound,
		func(id string, _ error) string { return fmt.Sprintf("schedule %q not found", id) })
	// ErrResourceNotFound: the resource is not attached to the schedule.
	ErrResourceNotFound = errors.New("nucleus: resource not attached to schedule")
	// ErrConcurrentUpdate: another request changed the item at the same
	// time, more often than the store retries.
	ErrConcurrentUpdate = api.NewKind("nucleus: concurrent update", http.StatusConflict, api.CodeConflict,
		api.Says("the item was changed by a concurrent request; retry"))
	// ErrTooLarge: an item would exceed DynamoDB's 400 KB item limit.
	ErrTooLarge = api.NewKind("nucleus: item would exceed the 400 KB item limit", http.StatusRequestEntityTooLarge, api.CodeTooLarge,
		api.Says("the item would exceed DynamoDB's 400 KB item size limit"))
	// ErrAuditCollision: an audit entry with the same key exists. Keys
	// carry a ULID, so this means a broken ID source, never a busy entity.
	ErrAuditCollision = errors.New("nucleus: audit entry key already exists")
)

// cursorHint says what a listing's cursor must come with.
const cursorHint = "pass next_cursor of the previous page unchanged, with the same filters"

// EntityType names what an audit entry is about.
type EntityType string

// Entity types.
const (
	EntityAccount  EntityType = "account"
	EntitySchedule EntityType = "schedule"
	// EntityGlobal is for entries tied to no entity.
	EntityGlobal EntityType = "global"
)

// Entity identifies an audited object. Its audit partition key is its
// app-table partition key (Decision 6), or GLOBAL.
type Entity struct {
	Type EntityType
	ID   string
}

// key is the audit table pk of e.
func (e Entity) key() string {
	switch e.Type {
	case EntityAccount:
		return contract.PrefixAccount + e.ID
	case EntitySchedule:
		return contract.PrefixSchedule + e.ID
	}
	return contract.KeyGlobal
}

// entityOf parses an audit pk back into an Entity.
func entityOf(pk string) Entity {
	if id, ok := strings.CutPrefix(pk, contract.PrefixAccount); ok {
		return Entity{Type: EntityAccount, ID: id}
	}
	if id, ok := strings.CutPrefix(pk, contract.PrefixSchedule); ok {
		return Entity{Type: EntitySchedule, ID: id}
	}
	return Entity{Type: EntityGlobal}
}
