// Package contract is the Nucleus platform's contract (design document
// 001, docs/schemas/nucleus.md): its tables' names, its functions and its
// routes, declared once for the stacks and the Lambda code alike.
package contract

import "github.com/dynastack/dynastack/constructs/service"

// Names fixed by the design document.
const (
	Name = "nucleus"

	AppTableBaseName   = "NucleusAppTable"
	AuditTableBaseName = "NucleusAuditTable"

	AttrPK     = "pk"
	AttrSK     = "sk"
	AttrGSI1PK = "gsi1pk"
	AttrGSI1SK = "gsi1sk"
	// AttrExpireAt expires audit entries (epoch seconds), and on the app
	// table only the API's idempotency records: no account, schedule or
	// execution carries it (docs/schemas/nucleus.md, decisions).
	AttrExpireAt = "expire_at"

	// IndexGSI1 is the one index of both tables.
	IndexGSI1 = "GSI1"

	// ExecutorName is the executor function's name, which is also its STS
	// session name and the user of the audit entries it writes.
	ExecutorName = "nucleus-executor"
)

// Variables of the functions.
const (
	EnvAppTable   = "NUCLEUS_APP_TABLE"
	EnvAuditTable = "NUCLEUS_AUDIT_TABLE"
	// EnvRolePattern is the role name (IAM wildcards allowed) Nucleus may
	// assume in a managed account.
	EnvRolePattern = "NUCLEUS_ROLE_NAME_PATTERN"
	// EnvLookBack is how far back the executor looks for missed fire times
	// (a Go duration).
	EnvLookBack = "NUCLEUS_EXECUTOR_LOOKBACK"
)

// The tables.
var (
	App   = service.Table{BaseName: AppTableBaseName, Env: EnvAppTable}
	Audit = service.Table{BaseName: AuditTableBaseName, Env: EnvAuditTable}
)

// The API (document 001: accounts, schedules and their targeted
// resources, and the audit log by entity and globally).
var (
	CreateAccount    = service.Route{Method: "POST", Path: "/accounts", Idempotent: true}
	ListAccounts     = service.Route{Method: "GET", Path: "/accounts", Query: []string{"status", "limit", "cursor"}}
	GetAccount       = service.Route{Method: "GET", Path: "/accounts/{id}"}
	UpdateAccount    = service.Route{Method: "PATCH", Path: "/accounts/{id}"}
	DeleteAccount    = service.Route{Method: "DELETE", Path: "/accounts/{id}"}
	AccountResources = service.Route{Method: "GET", Path: "/accounts/{id}/resources", Query: []string{"limit", "cursor"}}
	TestAccount      = service.Route{Method: "POST", Path: "/accounts/{id}/test"}
	CreateSchedule   = service.Route{Method: "POST", Path: "/schedules", Idempotent: true}
	ListSchedules    = service.Route{Method: "GET", Path: "/schedules", Query: []string{"limit", "cursor"}}
	GetSchedule      = service.Route{Method: "GET", Path: "/schedules/{id}", Query: []string{"limit", "cursor"}}
	UpdateSchedule   = service.Route{Method: "PATCH", Path: "/schedules/{id}"}
	DeleteSchedule   = service.Route{Method: "DELETE", Path: "/schedules/{id}"}
	AttachResource   = service.Route{Method: "PUT", Path: "/schedules/{id}/resources"}
	DetachResource   = service.Route{Method: "DELETE", Path: "/schedules/{id}/resources/{arn+}"}
	RecordExecution  = service.Route{Method: "POST", Path: "/audit"}
	Timeline         = service.Route{Method: "GET", Path: "/audit", Query: []string{"since", "until", "limit", "cursor"}}
	GlobalLog        = service.Route{Method: "GET", Path: "/audit/global", Query: []string{"since", "until", "limit", "cursor"}}
	EntityLog        = service.Route{Method: "GET", Path: "/audit/{entityType}/{id}", Query: []string{"since", "until", "limit", "cursor"}}
)

// The functions.
var (
	API = service.Function{
		Name: Name, Kind: service.HTTP, Description: "Nucleus accounts, schedules and audit API",
		Routes: []service.Route{
			CreateAccount, ListAccounts, GetAccount, UpdateAccount, DeleteAccount, AccountResources, TestAccount,
			CreateSchedule, ListSchedules, GetSchedule, UpdateSchedule, DeleteSchedule, AttachResource, DetachResource,
			RecordExecution, Timeline, GlobalLog, EntityLog,
		},
	}
	// Executor runs due schedules.
	Executor = service.Function{
		Name: ExecutorName, Kind: service.Schedule,
		Description: "Nucleus schedule executor: starts and stops the resources of due schedules",
	}
)

// Service is the whole contract.
var Service = service.Contract{
	Name: Name, Description: "Nucleus app and audit tables (document 001)",
	Tables:    []service.Table{App, Audit},
	Functions: []service.Function{API, Executor},
}
