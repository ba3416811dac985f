// Package agenticpm is the data service of the AgenticPM agent: projects,
// their artefacts, events, escalations, agent actions and checkpoints, plus
// integration and agent configuration, all in one DynamoDB table
// (AgenticPM-<stage>) whose GSI1 serves the cross-project views.
//
// The HTTP API is built by NewHandler; Store is the data access it uses and
// can be used on its own. docs/schemas/agenticpm.md is the contract: its
// Decisions section is what the conditions and key formats here implement.
package agenticpm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// ProjectStatus is a project's lifecycle state.
type ProjectStatus string

// Project statuses.
const (
	ProjectActive   ProjectStatus = "active"
	ProjectPaused   ProjectStatus = "paused"
	ProjectArchived ProjectStatus = "archived"
)

// Source is the tracker a project is read from.
type Source string

// Sources.
const (
	SourceJira  Source = "jira"
	SourceAsana Source = "asana"
)

// AutonomyLevel is how far the agent may act on its own.
type AutonomyLevel string

// Autonomy levels, least autonomous first.
const (
	AutonomyMonitoring AutonomyLevel = "monitoring"
	AutonomyArtefact   AutonomyLevel = "artefact"
	AutonomyTactical   AutonomyLevel = "tactical"
)

// ArtefactType names one of the four artefacts a project has at most.
type ArtefactType string

// Artefact types.
const (
	ArtefactDeliveryState  ArtefactType = "delivery_state"
	ArtefactRAIDLog        ArtefactType = "raid_log"
	ArtefactBacklogSummary ArtefactType = "backlog_summary"
	ArtefactDecisionLog    ArtefactType = "decision_log"
)

// Severity is an event's severity.
type Severity string

// Severities, least severe first.
const (
	SeverityInfo     Severity = "info"
	SeverityWarning  Severity = "warning"
	SeverityError    Severity = "error"
	SeverityCritical Severity = "critical"
)

// EscalationStatus is an escalation's state; only pending ones await a
// decision.
type EscalationStatus string

// Escalation statuses.
const (
	EscalationPending    EscalationStatus = "pending"
	EscalationDecided    EscalationStatus = "decided"
	EscalationExpired    EscalationStatus = "expired"
	EscalationSuperseded EscalationStatus = "superseded"
)

// Integration names an external system with stored credentials.
type Integration string

// Integrations with a configuration item.
const (
	IntegrationJira    Integration = "jira"
	IntegrationAsana   Integration = "asana"
	IntegrationOutlook Integration = "outlook"
	IntegrationResend  Integration = "resend"
)

// IntegrationStatus is the health of an integration's configuration.
type IntegrationStatus string

// Integration statuses.
const (
	IntegrationActive   IntegrationStatus = "active"
	IntegrationInactive IntegrationStatus = "inactive"
	IntegrationError    IntegrationStatus = "error"
)

// The closed sets, in documentation order; validation messages list them.
var (
	ProjectStatuses     = []ProjectStatus{ProjectActive, ProjectPaused, ProjectArchived}
	Sources             = []Source{SourceJira, SourceAsana}
	AutonomyLevels      = []AutonomyLevel{AutonomyMonitoring, AutonomyArtefact, AutonomyTactical}
	ArtefactTypes       = []ArtefactType{ArtefactDeliveryState, ArtefactRAIDLog, ArtefactBacklogSummary, ArtefactDecisionLog}
	Severities          = []Severity{SeverityInfo, SeverityWarning, SeverityError, SeverityCritical}
	EscalationStatuses  = []EscalationStatus{EscalationPending, EscalationDecided, EscalationExpired, EscalationSuperseded}
	Integrations        = []Integration{IntegrationJira, IntegrationAsana, IntegrationOutlook, IntegrationResend}
	IntegrationStatuses = []IntegrationStatus{IntegrationActive, IntegrationInactive, IntegrationError}
)

// DefaultAgentConfig holds the documented defaults of the agent
// configuration. The service serves them for keys no item sets, marked
// "default": true, and never writes them, so a default changed here never
// overwrites a value an operator chose.
var DefaultAgentConfig = map[string]Doc{
	"polling_interval_minutes": Doc(`15`),
	"budget_ceiling_daily_usd": Doc(`0.33`),
	"hold_queue_minutes":       Doc(`30`),
	"working_hours":            Doc(`{"start":"08:00","end":"18:00","timezone":"Australia/Sydney"}`),
	// Not in the document (decision 20): the deadline of an escalation
	// created without expiresAt.
	"escalation_expiry_hours": Doc(`72`),
}

// numericSettings are the agent settings the service itself reads, with
// the range PUT accepts: a value outside it would make every hold or
// escalation deadline wrong.
var numericSettings = map[string][2]float64{
	HoldQueueKey:        {1, MaxHoldQueue.Minutes()},
	EscalationExpiryKey: {1, MaxEscalationExpiry.Hours()},
}

// Retention of the items that expire (decision 2).
const (
	EventRetention  = 30 * 24 * time.Hour
	ActionRetention = 90 * 24 * time.Hour
)

// Limits. Text is bounded in characters; documents (content, config,
// detail, …) in DynamoDB bytes as ddb.ItemSize counts them.
// MaxArtefactContentBytes is under half the item limit because an artefact
// holds its content twice (content and previousVersion, decision 7): any
// content accepted now still fits after the next update, so an update never
// fails on size half-way through a lifecycle.
const (
	MaxNameChars            = 200
	MaxTextChars            = 10000 // description, summary, notes, rationale
	MaxIdentifierChars      = 64    // key parts, event and action types
	MaxCheckpointValueChars = 8192
	MaxArtefactContentBytes = 190 << 10
	MaxProjectConfigBytes   = 64 << 10
	DefaultPageSize         = 25
	MaxPageSize             = 100
	maxRequestBodyBytes     = 1 << 20
	// maxQueryRounds bounds the Query calls of one page: expired items not
	// yet deleted are filtered after DynamoDB's Limit, so a page can need
	// more than one round to fill.
	maxQueryRounds = 8
	// maxRoundLimit caps the Limit of one Query round.
	maxRoundLimit = 1000
)

// Timestamp formats t as the service stores times: fixed-width UTC, so
// that keys built from it sort as times (decision 8).
func Timestamp(t time.Time) string { return ddb.SortableTime(t) }

// Errors of the store. Match them with errors.Is; the typed errors below
// carry the details. Each is answered over HTTP as it says (api.Coded).
var (
	// ErrNotFound: the item (or the project it belongs to) does not exist.
	ErrNotFound = errors.New("agenticpm: not found")
	// ErrVersionConflict: an artefact is not at the expected version.
	ErrVersionConflict = errors.New("agenticpm: version conflict")
	// ErrStatusConflict: the item is not in the status a change requires.
	ErrStatusConflict = errors.New("agenticpm: status conflict")
	// ErrTooLarge: the item would exceed DynamoDB's 400 KB item limit.
	ErrTooLarge = api.NewKind("agenticpm: item would exceed the 400 KB item limit", http.StatusRequestEntityTooLarge, api.CodeTooLarge,
		api.Says("the item would exceed DynamoDB's 400 KB item size limit"))
	// ErrBusy: a concurrent transaction touched the same items; retry.
	ErrBusy = api.NewKind("agenticpm: concurrent update, retry", http.StatusConflict, api.CodeConflict,
		api.Says("a concurrent request changed the same items; retry"))
)

// cursorHint says what a listing's cursor must come with.
const cursorHint = "pass nextCursor of the previous page unchanged, to the same route with the same filters"

// public is a typed error's text as a client reads it: the service prefix
// is for logs.
func public(e error) string { return strings.TrimPrefix(e.Error(), "agenticpm: ") }

// NotFoundError names what is missing. It matches ErrNotFound.
type NotFoundError struct {
	Entity string // "project", "artefact", …
	ID     string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("agenticpm: %s %q not found", e.Entity, e.ID)
}

// Is implements errors.Is.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

func (e *NotFoundError) HTTPStatus() int                    { return http.StatusNotFound }
func (e *NotFoundError) ErrorCode() string                  { return api.CodeNotFound }
func (e *NotFoundError) PublicMessage(string, error) string { return public(e) }

// TooLargeError is a write refused before it was sent: What would take
// Size bytes of an item, over Limit. It matches ErrTooLarge.
type TooLargeError struct {
	What        string
	Size, Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("agenticpm: %s would take %d bytes; the limit is %d", e.What, e.Size, e.Limit)
}

// Is implements errors.Is.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

func (e *TooLargeError) HTTPStatus() int                    { return http.StatusRequestEntityTooLarge }
func (e *TooLargeError) ErrorCode() string                  { return api.CodeTooLarge }
func (e *TooLargeError) PublicMessage(string, error) string { return public(e) }

// VersionConflictError is a refused artefact write: the artefact is at
// Current (0: it does not exist) instead of Expected (0: create).
type VersionConflictError struct {
	Type              ArtefactType
	Expected, Current int
}

func (e *VersionConflictError) Error() string {
	if e.Expected == 0 {
		return fmt.Sprintf("agenticpm: artefact %s already exists at version %d; send its version to update it", e.Type, e.Current)
	}
	return fmt.Sprintf("agenticpm: artefact %s is at version %d, not %d; read it again and retry", e.Type, e.Current, e.Expected)
}

// Is implements errors.Is.
func (e *VersionConflictError) Is(target error) bool { return target == ErrVersionConflict }

func (e *VersionConflictError) HTTPStatus() int                    { return http.StatusConflict }
func (e *VersionConflictError) ErrorCode() string                  { return api.CodeConflict }
func (e *VersionConflictError) PublicMessage(string, error) string { return public(e) }

// StatusConflictError is a refused status change: the item is in Current,
// the change requires Want.
type StatusConflictError struct {
	Entity, ID    string
	Want, Current string
}

func (e *StatusConflictError) Error() string {
	return fmt.Sprintf("agenticpm: %s %q is %s, not %s", e.Entity, e.ID, e.Current, e.Want)
}

// Is implements errors.Is.
func (e *StatusConflictError) Is(target error) bool { return target == ErrStatusConflict }

func (e *StatusConflictError) HTTPStatus() int                    { return http.StatusConflict }
func (e *StatusConflictError) ErrorCode() string                  { return api.CodeConflict }
func (e *StatusConflictError) PublicMessage(string, error) string { return public(e) }

// Doc is a free-form JSON value stored as a DynamoDB document: artefact
// content, project config, event detail, escalation context and options,
// agent config values.
type Doc = ddb.Doc

// docError is a document DynamoDB would refuse.
type docError = ddb.InvalidDocError
