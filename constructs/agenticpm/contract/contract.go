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

	// IndexGSI1 is the table's one index.
	IndexGSI1 = "GSI1"
)

// Variables of the functions.
const (
	// EnvTable carries the table's physical name.
	EnvTable = "AGENTICPM_TABLE"
	// EnvEventBus names the EventBridge bus released actions go to.
	EnvEventBus = "AGENTICPM_EVENT_BUS"
	// EnvCredentialsKey names the KMS key (its alias, CredentialsKeyAlias)
	// that PUT /integrations/{name} encrypts credentials with.
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

// The API (document 004: every primary and GSI1 access pattern, and the
// writes that create those items; the hold queue's list, release and
// cancel; the escalation and artefact lifecycles).
var (
	CreateProject          = service.Route{Method: "POST", Path: "/projects", Idempotent: true}
	ListProjects           = service.Route{Method: "GET", Path: "/projects", Query: []string{"status", "limit", "cursor"}}
	GetProject             = service.Route{Method: "GET", Path: "/projects/{id}"}
	UpdateProject          = service.Route{Method: "PATCH", Path: "/projects/{id}"}
	ListArtefacts          = service.Route{Method: "GET", Path: "/projects/{id}/artefacts"}
	GetArtefact            = service.Route{Method: "GET", Path: "/projects/{id}/artefacts/{type}"}
	PutArtefact            = service.Route{Method: "PUT", Path: "/projects/{id}/artefacts/{type}"}
	UndoArtefact           = service.Route{Method: "POST", Path: "/projects/{id}/artefacts/{type}/undo"}
	RecordProjectEvent     = service.Route{Method: "POST", Path: "/projects/{id}/events", Idempotent: true}
	ListProjectEvents      = service.Route{Method: "GET", Path: "/projects/{id}/events", Query: []string{"limit", "cursor"}}
	RecordGlobalEvent      = service.Route{Method: "POST", Path: "/events", Idempotent: true}
	ListEvents             = service.Route{Method: "GET", Path: "/events", Query: []string{"date", "limit", "cursor"}}
	CreateEscalation       = service.Route{Method: "POST", Path: "/projects/{id}/escalations", Idempotent: true}
	ListProjectEscalations = service.Route{Method: "GET", Path: "/projects/{id}/escalations", Query: []string{"limit", "cursor"}}
	GetEscalation          = service.Route{Method: "GET", Path: "/projects/{id}/escalations/{eid}"}
	Decide                 = service.Route{Method: "POST", Path: "/projects/{id}/escalations/{eid}/decision"}
	SupersedeEscalation    = service.Route{Method: "POST", Path: "/projects/{id}/escalations/{eid}/supersede", Idempotent: true}
	ListEscalations        = service.Route{Method: "GET", Path: "/escalations", Query: []string{"status", "limit", "cursor"}}
	RecordAction           = service.Route{Method: "POST", Path: "/projects/{id}/actions", Idempotent: true}
	ListActions            = service.Route{Method: "GET", Path: "/projects/{id}/actions", Query: []string{"limit", "cursor"}}
	ReleaseAction          = service.Route{Method: "POST", Path: "/projects/{id}/actions/{aid}/release"}
	CancelAction           = service.Route{Method: "POST", Path: "/projects/{id}/actions/{aid}/cancel"}
	MarkActionExecuted     = service.Route{Method: "POST", Path: "/projects/{id}/actions/{aid}/executed"}
	ListHeldActions        = service.Route{Method: "GET", Path: "/actions/held", Query: []string{"limit", "cursor"}}
	PutCheckpoint          = service.Route{Method: "PUT", Path: "/projects/{id}/checkpoints/{integration}/{key}"}
	GetCheckpoint          = service.Route{Method: "GET", Path: "/projects/{id}/checkpoints/{integration}/{key}"}
	PutIntegration         = service.Route{Method: "PUT", Path: "/integrations/{name}"}
	GetIntegration         = service.Route{Method: "GET", Path: "/integrations/{name}"}
	PutAgentConfig         = service.Route{Method: "PUT", Path: "/agent/config/{key}"}
	GetAgentConfig         = service.Route{Method: "GET", Path: "/agent/config/{key}"}
	ListAgentConfig        = service.Route{Method: "GET", Path: "/agent/config", Query: []string{"limit", "cursor"}}
)

// The functions.
var (
	API = service.Function{
		Name: Name, Kind: service.HTTP, Description: "AgenticPM projects, artefacts, events and escalations API",
		Routes: []service.Route{
			CreateProject, ListProjects, GetProject, UpdateProject,
			ListArtefacts, GetArtefact, PutArtefact, UndoArtefact,
			RecordProjectEvent, ListProjectEvents, RecordGlobalEvent, ListEvents,
			CreateEscalation, ListProjectEscalations, GetEscalation, Decide, SupersedeEscalation, ListEscalations,
			RecordAction, ListActions, ReleaseAction, CancelAction, MarkActionExecuted, ListHeldActions,
			PutCheckpoint, GetCheckpoint, PutIntegration, GetIntegration,
			PutAgentConfig, GetAgentConfig, ListAgentConfig,
		},
	}
	// Release is the service's scheduled job: it releases due held
	// actions and puts them on the bus, and expires overdue escalations
	// (one job: the same exactly-once rules, schedule, role and alarms).
	Release = service.Function{
		Name: "agenticpm-release", Kind: service.Schedule,
		Description: "AgenticPM deadlines: releases due held actions to the bus, expires overdue escalations",
	}
)

// Service is the whole contract.
var Service = service.Contract{
	Name: Name, Description: "AgenticPM (document 004)",
	Tables:    []service.Table{Table},
	Functions: []service.Function{API, Release},
}
