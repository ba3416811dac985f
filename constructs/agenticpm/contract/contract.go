// Package contract is AgenticPM's contract (design document 004,
// docs/schemas/agenticpm.md): its table's names, its functions and its
// routes, declared once for the stacks and the Lambda code alike.
package contract

import "github.com/dynastack/dynastack/constructs/service"

// Names fixed by the design document.
const (
	Name          = "agenticpm"
	TableBaseName = "AgenticPM"

	AttrPK     = "PK"
	AttrSK     = "SK"
	AttrGSI1PK = "GSI1PK"
	AttrGSI1SK = "GSI1SK"
	// AttrTTL expires events and other aged items (epoch seconds).
	AttrTTL = "TTL"

	// Attributes that updates, conditions and queries name (the document's
	// "Items" spell every item's).
	AttrID                = "id"
	AttrName              = "name"
	AttrDescription       = "description"
	AttrSource            = "source"
	AttrSourceProjectKey  = "sourceProjectKey"
	AttrAutonomyLevel     = "autonomyLevel"
	AttrConfig            = "config"
	AttrStatus            = "status"
	AttrCreatedAt         = "createdAt"
	AttrUpdatedAt         = "updatedAt"
	AttrVersion           = "version"
	AttrContent           = "content"
	AttrPreviousVersion   = "previousVersion"
	AttrExpiresAt         = "expiresAt"
	AttrUserDecision      = "userDecision"
	AttrUserNotes         = "userNotes"
	AttrDecidedAt         = "decidedAt"
	AttrSupersededBy      = "supersededBy"
	AttrSupersededAt      = "supersededAt"
	AttrExpiredAt         = "expiredAt"
	AttrHeldUntil         = "heldUntil"
	AttrExecuted          = "executed"
	AttrExecutedAt        = "executedAt"
	AttrCancelledAt       = "cancelledAt"
	AttrReleasedBy        = "releasedBy"
	AttrDispatchedAt      = "dispatchedAt"
	AttrEventID           = "eventId"
	AttrIntegration       = "integration"
	AttrConfigEncrypted   = "configEncrypted"
	AttrKMSKeyID          = "kmsKeyId"
	AttrEncryptionContext = "encryptionContext"
	AttrLastHealthCheck   = "lastHealthCheck"
	// AttrDispatchLease (epoch milliseconds) holds a released action
	// while one run puts it on the bus.
	AttrDispatchLease = "dispatchLease"
	// AttrWriteToken is the token of the last change, which tells a
	// retried write from another request's.
	AttrWriteToken = "writeToken"

	// IndexGSI1 is the table's one index.
	IndexGSI1 = "GSI1"
)

// Key values (docs/schemas/agenticpm.md, "Items"): the prefixes of
// composite keys and the fixed values.
const (
	// PrefixProject + project id is a project's partition (ProjectPK),
	// and its GSI1SK.
	PrefixProject = "PROJECT#"
	// KeyMetadata is a project's SK.
	KeyMetadata = "METADATA"
	// PrefixArtefact + type, PrefixEvent + time#id, PrefixEscalation +
	// id, PrefixAction + time#id, PrefixCheckpoint + integration#key:
	// the SKs of what a project holds (EventSK, ActionSK, CheckpointSK).
	PrefixArtefact   = "ARTEFACT#"
	PrefixEvent      = "EVENT#"
	PrefixEscalation = "ESCALATION#"
	PrefixAction     = "ACTION#"
	PrefixCheckpoint = "CHECKPOINT#"
	// KeyGlobal is the partition of the global event feed.
	KeyGlobal = "GLOBAL"
	// PrefixIntegration + integration is an integration's partition,
	// KeyConfig its SK.
	PrefixIntegration = "INTEGRATION#"
	KeyConfig         = "CONFIG"
	// KeyAgent is the partition of the agent's settings, PrefixConfig +
	// key the SK of one.
	KeyAgent     = "AGENT"
	PrefixConfig = "CONFIG#"
	// GSI1 partitions: PrefixStatus + project status (StatusGSI1PK),
	// PrefixEscalation + escalation status (EscalationGSI1PK), PrefixEvent
	// + date (EventDateGSI1PK), and the hold queue's two.
	PrefixStatus    = "STATUS#"
	KeyHoldPending  = "HOLD#pending"
	KeyHoldDispatch = "HOLD#dispatch"
)

// ProjectPK is the partition of a project and everything under it.
func ProjectPK(id string) string { return PrefixProject + id }

// EventSK is an event's SK: its time (sortable), then its id.
func EventSK(timestamp, id string) string { return PrefixEvent + timestamp + "#" + id }

// ActionSK is an action's SK: its time (sortable), then its id.
func ActionSK(timestamp, id string) string { return PrefixAction + timestamp + "#" + id }

// CheckpointSK is a checkpoint's SK: the integration, then the caller's
// key.
func CheckpointSK(integration, key string) string { return PrefixCheckpoint + integration + "#" + key }

// StatusGSI1PK lists the projects of one status.
func StatusGSI1PK(status string) string { return PrefixStatus + status }

// EscalationGSI1PK lists the escalations of one status.
func EscalationGSI1PK(status string) string { return PrefixEscalation + status }

// EventDateGSI1PK lists the events of one UTC date (YYYY-MM-DD).
func EventDateGSI1PK(date string) string { return PrefixEvent + date }

// Variables of the functions.
const (
	// EnvTable carries the table's physical name.
	EnvTable = "AGENTICPM_TABLE"
	// EnvEventBus names the EventBridge bus released actions go to (name
	// or ARN). Without it releases still happen and wait in the outbox.
	EnvEventBus = "AGENTICPM_EVENT_BUS"
	// EnvCredentialsKey names the KMS key (its alias, CredentialsKeyAlias)
	// that PUT /integrations/{name} encrypts credentials with, under an
	// encryption context naming the stage (service.EnvStage). Without it
	// that route answers 500 naming the variable.
	EnvCredentialsKey = "AGENTICPM_CREDENTIALS_KEY"
)

// Integration credentials under KMS (docs/schemas/agenticpm.md, decision
// 10): the encryption context the API encrypts with and the IAM
// conditions of the key's users are built from these, so the two cannot
// drift apart.
const (
	// ContextIntegration is the encryption context key naming the
	// integration (one of Integrations).
	ContextIntegration = "integration"
	// ContextStage is the encryption context key naming the stage.
	ContextStage = "stage"
)

// Integrations are the integrations with stored credentials (document
// 004: jira, asana, outlook, resend).
var Integrations = []string{"jira", "asana", "outlook", "resend"}

// CredentialsKeyAlias is the alias of a stage's credentials key.
func CredentialsKeyAlias(stage string) string { return "alias/agenticpm-credentials-" + stage }

// Table is the single table.
var Table = service.Table{BaseName: TableBaseName, Env: EnvTable}

// Parameters of the routes.
const (
	// ParamID is a project's id, a UUID.
	ParamID service.PathParam = "id"
	// ParamType is an artefact's type (one of the document's artefact
	// types).
	ParamType service.PathParam = "type"
	// ParamEID is an escalation's id, ParamAID an action's (UUIDs).
	ParamEID service.PathParam = "eid"
	ParamAID service.PathParam = "aid"
	// ParamIntegration and ParamKey name a checkpoint: the integration
	// and the caller's key in it. ParamKey also names an agent setting.
	ParamIntegration service.PathParam = "integration"
	ParamKey         service.PathParam = "key"
	// ParamName is an integration with stored credentials (one of
	// Integrations).
	ParamName service.PathParam = "name"
	// ParamStatus lists the projects or escalations of one status.
	ParamStatus service.QueryParam = "status"
	// ParamDate lists the events of one UTC day (YYYY-MM-DD).
	ParamDate service.QueryParam = "date"
)

// The API (document 004: every primary and GSI1 access pattern, and the
// writes that create those items; the hold queue's list, release and
// cancel; the escalation and artefact lifecycles).
var (
	CreateProject          = service.Route{Operation: "createProject", Method: "POST", Path: "/projects", Idempotent: true}
	ListProjects           = service.Route{Operation: "listProjects", Method: "GET", Path: "/projects", Query: []service.QueryParam{ParamStatus, service.Limit, service.Cursor}}
	GetProject             = service.Route{Operation: "getProject", Method: "GET", Path: "/projects/{id}"}
	UpdateProject          = service.Route{Operation: "updateProject", Method: "PATCH", Path: "/projects/{id}"}
	ListArtefacts          = service.Route{Operation: "listArtefacts", Method: "GET", Path: "/projects/{id}/artefacts"}
	GetArtefact            = service.Route{Operation: "getArtefact", Method: "GET", Path: "/projects/{id}/artefacts/{type}"}
	PutArtefact            = service.Route{Operation: "putArtefact", Method: "PUT", Path: "/projects/{id}/artefacts/{type}"}
	UndoArtefact           = service.Route{Operation: "undoArtefact", Method: "POST", Path: "/projects/{id}/artefacts/{type}/undo"}
	RecordProjectEvent     = service.Route{Operation: "recordProjectEvent", Method: "POST", Path: "/projects/{id}/events", Idempotent: true}
	ListProjectEvents      = service.Route{Operation: "listProjectEvents", Method: "GET", Path: "/projects/{id}/events", Query: []service.QueryParam{service.Limit, service.Cursor}}
	RecordGlobalEvent      = service.Route{Operation: "recordGlobalEvent", Method: "POST", Path: "/events", Idempotent: true}
	ListEvents             = service.Route{Operation: "listEvents", Method: "GET", Path: "/events", Query: []service.QueryParam{ParamDate, service.Limit, service.Cursor}}
	CreateEscalation       = service.Route{Operation: "createEscalation", Method: "POST", Path: "/projects/{id}/escalations", Idempotent: true}
	ListProjectEscalations = service.Route{Operation: "listProjectEscalations", Method: "GET", Path: "/projects/{id}/escalations", Query: []service.QueryParam{service.Limit, service.Cursor}}
	GetEscalation          = service.Route{Operation: "getEscalation", Method: "GET", Path: "/projects/{id}/escalations/{eid}"}
	Decide                 = service.Route{Operation: "decide", Method: "POST", Path: "/projects/{id}/escalations/{eid}/decision"}
	SupersedeEscalation    = service.Route{Operation: "supersedeEscalation", Method: "POST", Path: "/projects/{id}/escalations/{eid}/supersede", Idempotent: true}
	ListEscalations        = service.Route{Operation: "listEscalations", Method: "GET", Path: "/escalations", Query: []service.QueryParam{ParamStatus, service.Limit, service.Cursor}}
	RecordAction           = service.Route{Operation: "recordAction", Method: "POST", Path: "/projects/{id}/actions", Idempotent: true}
	ListActions            = service.Route{Operation: "listActions", Method: "GET", Path: "/projects/{id}/actions", Query: []service.QueryParam{service.Limit, service.Cursor}}
	ReleaseAction          = service.Route{Operation: "releaseAction", Method: "POST", Path: "/projects/{id}/actions/{aid}/release"}
	CancelAction           = service.Route{Operation: "cancelAction", Method: "POST", Path: "/projects/{id}/actions/{aid}/cancel"}
	MarkActionExecuted     = service.Route{Operation: "markActionExecuted", Method: "POST", Path: "/projects/{id}/actions/{aid}/executed"}
	ListHeldActions        = service.Route{Operation: "listHeldActions", Method: "GET", Path: "/actions/held", Query: []service.QueryParam{service.Limit, service.Cursor}}
	PutCheckpoint          = service.Route{Operation: "putCheckpoint", Method: "PUT", Path: "/projects/{id}/checkpoints/{integration}/{key}"}
	GetCheckpoint          = service.Route{Operation: "getCheckpoint", Method: "GET", Path: "/projects/{id}/checkpoints/{integration}/{key}"}
	PutIntegration         = service.Route{Operation: "putIntegration", Method: "PUT", Path: "/integrations/{name}"}
	GetIntegration         = service.Route{Operation: "getIntegration", Method: "GET", Path: "/integrations/{name}"}
	PutAgentConfig         = service.Route{Operation: "putAgentConfig", Method: "PUT", Path: "/agent/config/{key}"}
	GetAgentConfig         = service.Route{Operation: "getAgentConfig", Method: "GET", Path: "/agent/config/{key}"}
	ListAgentConfig        = service.Route{Operation: "listAgentConfig", Method: "GET", Path: "/agent/config", Query: []service.QueryParam{service.Limit, service.Cursor}}
)

// The functions. The API's routes are served by three functions behind
// the service's one HTTP API (each route's integration names its
// function), split by the AWS services they call so that each function's
// role and bootstrap hold only its own: Actions alone puts released
// actions on the bus (EventBridge), Credentials alone encrypts with the
// credentials key (KMS), and API, the rest, calls DynamoDB only
// (docs/schemas/agenticpm.md, decision 22).
var (
	API = service.Function{
		Name: Name, Kind: service.HTTP, Description: "AgenticPM projects, artefacts, events, escalations, checkpoints and agent settings API",
		Routes: []service.Route{
			CreateProject, ListProjects, GetProject, UpdateProject,
			ListArtefacts, GetArtefact, PutArtefact, UndoArtefact,
			RecordProjectEvent, ListProjectEvents, RecordGlobalEvent, ListEvents,
			CreateEscalation, ListProjectEscalations, GetEscalation, Decide, SupersedeEscalation, ListEscalations,
			PutCheckpoint, GetCheckpoint,
			PutAgentConfig, GetAgentConfig, ListAgentConfig,
		},
	}
	// Actions is the hold queue's API: an action released by a person
	// goes to the bus in the request (PutEvents), as the release job's do.
	Actions = service.Function{
		Name: "agenticpm-actions", Kind: service.HTTP, Description: "AgenticPM agent actions API: the hold queue, releases to the bus",
		Routes: []service.Route{RecordAction, ListActions, ReleaseAction, CancelAction, MarkActionExecuted, ListHeldActions},
	}
	// Credentials is the integration credentials API: PUT encrypts an
	// integration's configuration with the stage's credentials key (KMS
	// Encrypt).
	Credentials = service.Function{
		Name: "agenticpm-credentials", Kind: service.HTTP, Description: "AgenticPM integration credentials API (KMS-sealed)",
		Routes: []service.Route{PutIntegration, GetIntegration},
	}
	// Release is the service's scheduled job: it releases due held
	// actions and puts them on the bus, and expires overdue escalations
	// (one job: the same exactly-once rules, schedule, role and alarms).
	Release = service.Function{
		Name: "agenticpm-release", Kind: service.Schedule,
		Description: "AgenticPM deadlines: releases due held actions to the bus, expires overdue escalations",
		Metrics:     []service.Metric{Releases, OverdueHeldActions, EscalationsClosed},
	}
)

// Service is the whole contract.
var Service = service.Contract{
	Name: Name, Description: "AgenticPM (document 004)", APIVersion: "1.0.1",
	Tables: []service.Table{Table},
	Attributes: []string{AttrPK, AttrSK, AttrGSI1PK, AttrGSI1SK, AttrTTL,
		AttrID, AttrName, AttrDescription, AttrSource, AttrSourceProjectKey, AttrAutonomyLevel, AttrConfig, AttrStatus,
		AttrCreatedAt, AttrUpdatedAt, AttrVersion, AttrContent, AttrPreviousVersion, AttrExpiresAt, AttrUserDecision,
		AttrUserNotes, AttrDecidedAt, AttrSupersededBy, AttrSupersededAt, AttrExpiredAt, AttrHeldUntil, AttrExecuted,
		AttrExecutedAt, AttrCancelledAt, AttrReleasedBy, AttrDispatchedAt, AttrEventID, AttrIntegration, AttrConfigEncrypted,
		AttrKMSKeyID, AttrEncryptionContext, AttrLastHealthCheck, AttrDispatchLease, AttrWriteToken},
	KeyParts: []string{PrefixProject, KeyMetadata, PrefixArtefact, PrefixEvent, PrefixEscalation, PrefixAction,
		PrefixCheckpoint, KeyGlobal, PrefixIntegration, KeyConfig, KeyAgent, PrefixConfig, PrefixStatus,
		KeyHoldPending, KeyHoldDispatch},
	Functions: []service.Function{API, Actions, Credentials, Release},
}

// OverdueGraceMinutes: a held action still held this long after its
// heldUntil is overdue (the release job runs every minute by default, so
// five runs missed it). The OverdueHeldActions alarm watches it.
const OverdueGraceMinutes = 5

// Metric dimensions and their values (service.Metric, platform/metrics).
const (
	DimOutcome        = "outcome"
	OutcomeExpired    = "expired"
	OutcomeSuperseded = "superseded"
)

// AgenticPM's metrics.
var (
	// Releases counts held actions the release job released.
	Releases = service.Metric{Name: "Releases", Unit: service.Count,
		Description: "held actions the release job released to the bus"}
	// OverdueHeldActions is, at each release run, how many held actions
	// found due were due more than OverdueGraceMinutes ago.
	OverdueHeldActions = service.Metric{Name: "OverdueHeldActions", Unit: service.Count,
		Description: "held actions still held more than the grace after their heldUntil, at each release run"}
	// EscalationsClosed counts escalations closed without a decision:
	// expired by the release job, superseded by the API.
	EscalationsClosed = service.Metric{Name: "EscalationsClosed", Unit: service.Count,
		Description: "escalations closed undecided, by outcome (expired, superseded)",
		Dimensions:  []service.Dimension{{Name: DimOutcome, Values: []string{OutcomeExpired, OutcomeSuperseded}}}}
)
