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

	// Attributes of accounts, schedules and resources that updates,
	// conditions and filters name. AttrVersion counts an item's changes
	// (every update is conditioned on the version it read);
	// AttrResourceCount and AttrResourceVersion are an account's and a
	// schedule's count of attached resources and its change counter.
	AttrAccountName          = "account_name"
	AttrRoleARN              = "role_arn"
	AttrExternalID           = "external_id"
	AttrStatus               = "status"
	AttrLastTestRunAt        = "last_test_run_at"
	AttrLastTestStatus       = "last_test_status"
	AttrResourceCount        = "resource_count"
	AttrResourceVersion      = "resource_version"
	AttrScheduleName         = "schedule_name"
	AttrStartCron            = "start_cron"
	AttrEndCron              = "end_cron"
	AttrTimezone             = "timezone"
	AttrEnabled              = "enabled"
	AttrUpdatedAt            = "updated_at"
	AttrVersion              = "version"
	AttrPreviousDesiredCount = "previous_desired_count"
	// AttrTimingChangedAt is when a schedule's timing last changed (its
	// crons, time zone or enabled flag; a rename is no such change): the
	// executor acts on no fire from before it.
	AttrTimingChangedAt = "timing_changed_at"
	// AttrState, AttrOwner and AttrLeaseUntil are an execution claim's
	// (audit table): running or done, the run holding it, and until when
	// (epoch seconds).
	AttrState      = "state"
	AttrOwner      = "owner"
	AttrLeaseUntil = "lease_until"

	// IndexGSI1 is the one index of both tables.
	IndexGSI1 = "GSI1"

	// ExecutorName is the executor function's name, which is also its STS
	// session name and the user of the audit entries it writes.
	ExecutorName = "nucleus-executor"
)

// Key values (docs/schemas/nucleus.md, "Items"): the prefixes of
// composite keys and the fixed values.
const (
	// PrefixAccount + account id is an account's pk, and the gsi1pk of
	// the resources in it.
	PrefixAccount = "ACCOUNT#"
	// PrefixSchedule + schedule id is a schedule's pk, and the gsi1sk of
	// its resources.
	PrefixSchedule = "SCHEDULE#"
	// PrefixResource + ARN is a resource's sk in its schedule, and of its
	// marker under an execution.
	PrefixResource = "RESOURCE#"
	// PrefixTimestamp starts an audit entry's sk (AuditSK).
	PrefixTimestamp = "TIMESTAMP#"
	// PrefixExecution starts an execution's pk (ExecutionPK).
	PrefixExecution = "EXECUTION#"
	// KeyMetadata is the sk of an account and of a schedule.
	KeyMetadata = "METADATA"
	// KeyClaim is the sk of an execution's claim.
	KeyClaim = "CLAIM"
	// KeyGlobal is the audit pk of entries about no entity.
	KeyGlobal = "GLOBAL"
	// KeyTypeAccount and KeyTypeSchedule are the gsi1pk of every account
	// and every schedule: GSI1 lists them by name.
	KeyTypeAccount  = "TYPE#ACCOUNT"
	KeyTypeSchedule = "TYPE#SCHEDULE"
	// KeyAuditGlobal is the gsi1pk of every audit entry: the global
	// timeline.
	KeyAuditGlobal = "AUDIT#GLOBAL"
)

// AuditSK is an audit entry's sk (and gsi1sk): its timestamp, then the
// entry id (a ULID) that tells entries of the same instant apart.
func AuditSK(timestamp, entryID string) string { return PrefixTimestamp + timestamp + "#" + entryID }

// ExecutionPK is the audit-table pk of one execution of a schedule: the
// operation (start, stop) at one fire time (RFC 3339, UTC).
func ExecutionPK(scheduleID, operation, fireTime string) string {
	return PrefixExecution + scheduleID + "#" + operation + "#" + fireTime
}

// Variables of the functions.
const (
	EnvAppTable   = "NUCLEUS_APP_TABLE"
	EnvAuditTable = "NUCLEUS_AUDIT_TABLE"
	// EnvRolePattern is the role name (IAM wildcards allowed) Nucleus may
	// assume in a managed account: the API refuses an account whose
	// role_arn it does not match.
	EnvRolePattern = "NUCLEUS_ROLE_NAME_PATTERN"
	// EnvLookBack is how far back the executor looks for missed fire times
	// (a Go duration); optional.
	EnvLookBack = "NUCLEUS_EXECUTOR_LOOKBACK"
)

// The tables.
var (
	App   = service.Table{BaseName: AppTableBaseName, Env: EnvAppTable}
	Audit = service.Table{BaseName: AuditTableBaseName, Env: EnvAuditTable}
)

// Parameters of the routes.
const (
	// ParamID is an account's id (its 12-digit AWS account id) or a
	// schedule's (a UUID); with ParamEntityType, the audited entity's.
	ParamID service.PathParam = "id"
	// ParamARN is a targeted resource's ARN, the rest of the path.
	ParamARN service.PathParam = "arn"
	// ParamEntityType is the kind of an audited entity: account or
	// schedule.
	ParamEntityType service.PathParam = "entityType"
	// ParamStatus lists the accounts of one status.
	ParamStatus service.QueryParam = "status"
	// ParamSince and ParamUntil bound an audit listing (RFC 3339).
	ParamSince service.QueryParam = "since"
	ParamUntil service.QueryParam = "until"
)

// The API (document 001: accounts, schedules and their targeted
// resources, and the audit log by entity and globally).
var (
	CreateAccount    = service.Route{Operation: "createAccount", Method: "POST", Path: "/accounts", Idempotent: true}
	ListAccounts     = service.Route{Operation: "listAccounts", Method: "GET", Path: "/accounts", Query: []service.QueryParam{ParamStatus, service.Limit, service.Cursor}}
	GetAccount       = service.Route{Operation: "getAccount", Method: "GET", Path: "/accounts/{id}"}
	UpdateAccount    = service.Route{Operation: "updateAccount", Method: "PATCH", Path: "/accounts/{id}"}
	DeleteAccount    = service.Route{Operation: "deleteAccount", Method: "DELETE", Path: "/accounts/{id}"}
	AccountResources = service.Route{Operation: "accountResources", Method: "GET", Path: "/accounts/{id}/resources", Query: []service.QueryParam{service.Limit, service.Cursor}}
	TestAccount      = service.Route{Operation: "testAccount", Method: "POST", Path: "/accounts/{id}/test"}
	CreateSchedule   = service.Route{Operation: "createSchedule", Method: "POST", Path: "/schedules", Idempotent: true}
	ListSchedules    = service.Route{Operation: "listSchedules", Method: "GET", Path: "/schedules", Query: []service.QueryParam{service.Limit, service.Cursor}}
	GetSchedule      = service.Route{Operation: "getSchedule", Method: "GET", Path: "/schedules/{id}", Query: []service.QueryParam{service.Limit, service.Cursor}}
	UpdateSchedule   = service.Route{Operation: "updateSchedule", Method: "PATCH", Path: "/schedules/{id}"}
	DeleteSchedule   = service.Route{Operation: "deleteSchedule", Method: "DELETE", Path: "/schedules/{id}"}
	AttachResource   = service.Route{Operation: "attachResource", Method: "PUT", Path: "/schedules/{id}/resources"}
	DetachResource   = service.Route{Operation: "detachResource", Method: "DELETE", Path: "/schedules/{id}/resources/{arn+}"}
	RecordExecution  = service.Route{Operation: "recordExecution", Method: "POST", Path: "/audit"}
	Timeline         = service.Route{Operation: "timeline", Method: "GET", Path: "/audit", Query: []service.QueryParam{ParamSince, ParamUntil, service.Limit, service.Cursor}}
	GlobalLog        = service.Route{Operation: "globalLog", Method: "GET", Path: "/audit/global", Query: []service.QueryParam{ParamSince, ParamUntil, service.Limit, service.Cursor}}
	EntityLog        = service.Route{Operation: "entityLog", Method: "GET", Path: "/audit/{entityType}/{id}", Query: []service.QueryParam{ParamSince, ParamUntil, service.Limit, service.Cursor}}
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
		Metrics:     []service.Metric{ResourceActions},
	}
)

// Service is the whole contract.
var Service = service.Contract{
	Name: Name, Description: "Nucleus app and audit tables (document 001)", APIVersion: "1.0.1",
	Tables: []service.Table{App, Audit},
	Attributes: []string{AttrPK, AttrSK, AttrGSI1PK, AttrGSI1SK, AttrExpireAt,
		AttrAccountName, AttrRoleARN, AttrExternalID, AttrStatus, AttrLastTestRunAt, AttrLastTestStatus,
		AttrResourceCount, AttrResourceVersion, AttrScheduleName, AttrStartCron, AttrEndCron, AttrTimezone,
		AttrEnabled, AttrUpdatedAt, AttrVersion, AttrPreviousDesiredCount, AttrTimingChangedAt, AttrState, AttrOwner, AttrLeaseUntil},
	KeyParts: []string{PrefixAccount, PrefixSchedule, PrefixResource, PrefixTimestamp, PrefixExecution,
		KeyMetadata, KeyClaim, KeyGlobal, KeyTypeAccount, KeyTypeSchedule, KeyAuditGlobal},
	Functions: []service.Function{API, Executor},
}

// The resource kinds a schedule starts and stops (the resource_type of a
// schedule's resources).
const (
	KindEC2 = "ec2"
	KindECS = "ecs"
	KindRDS = "rds"
)

// Metric dimensions and their values (service.Metric, platform/metrics).
const (
	DimKind          = "kind"
	DimOutcome       = "outcome"
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
)

// ResourceActions counts the executor's start and stop actions by
// resource kind and outcome (the audit entry's SUCCESS or FAIL): a failed
// one is a resource left running or stopped against its schedule.
var ResourceActions = service.Metric{
	Name: "ResourceActions", Unit: service.Count,
	Description: "start and stop actions by resource kind and outcome",
	Dimensions: []service.Dimension{
		{Name: DimKind, Values: []string{KindEC2, KindECS, KindRDS, service.OtherValue}},
		{Name: DimOutcome, Values: []string{OutcomeSucceeded, OutcomeFailed}},
	},
}
