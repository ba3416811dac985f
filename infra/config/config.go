// Package config is the one place where per-stage settings live: where a
// stage deploys, whether its stacks are protected, and how its tables deviate
// from the platform's stage policy.
package config

import (
	"fmt"

	stak "github.com/dynastack/dynastack/constructs/stak/contract"

	"github.com/dynastack/dynastack/constructs/table"
)

// Stage is the configuration of one deployment environment.
type Stage struct {
	// Name is the stage, and the construct id of its awscdk.Stage, so that
	// `cdk deploy 'dev/*'` deploys dev.
	Name table.Stage
	// Account and Region pin the stage to an environment. Empty values keep
	// the stacks environment-agnostic, which is what lets synth run offline;
	// set them (or CDK_DEFAULT_ACCOUNT/REGION at deploy time) per stage.
	//
	// Default: "" (environment-agnostic).
	Account, Region string
	// Partition is the AWS partition of every account and Region of the
	// stage: aws, aws-cn or aws-us-gov.
	//
	// Default: "" (DefaultPartition, aws).
	Partition string
	// Services places a service's stack of the stage in an account and
	// Region of its own, keyed by service name (the contract's Name):
	// an empty field takes the stage's Account or Region (PlacementOf).
	// Every stack holds all it uses (its own alarm topic and key, tables,
	// functions, API), so services in different accounts share nothing
	// across a stack boundary. Moving a deployed service replaces its
	// stack's resources: docs/deploying.md, "Moving a service".
	//
	// Default: none, every stack where Account and Region say (prod ITSM
	// in its document's Region only if set: ITSMDocumentRegion).
	Services map[string]Placement
	// TerminationProtection makes CloudFormation refuse to delete the stacks.
	//
	// Default: true in prod only.
	TerminationProtection bool
	// Tables overrides the stage policy per table, keyed by TableKey.
	//
	// Default: none.
	Tables map[string]table.Overrides
	// TableNames replaces the physical name of a table, keyed by TableKey
	// ("itsm/Tickets"): how a stage adopts a table that already runs under
	// another name (prod ITSM as "poc-itsm-tickets"; docs/adopting-tables.md).
	// Changing the name of a table dynastack already deploys replaces it,
	// losing its data: set it before the table's first deploy (or import)
	// in the stage, never after. A key naming no table of the stage fails
	// the synth.
	//
	// Default: none, every table is <base name>-<stage>
	// (table.Spec.PhysicalName).
	TableNames map[string]string
	// RezAgentMessageTypeIndex adds rez_agent's optional message type
	// index, and the API lists and counts by message type with it.
	//
	// Default: true in prod only (see docs/schemas/rezagent.md).
	RezAgentMessageTypeIndex bool
	// RezAgent configures rez_agent's notification pipeline; zero fields
	// take the defaults of RezAgentPipeline.
	//
	// Default: every RezAgentPipeline default.
	RezAgent RezAgentPipeline
	// StakTokens names the identity provider of Stak's end users (issuer
	// and audience of the JWT authorizer); zero fields take the defaults
	// of StakTokensFor.
	//
	// Default: https://auth.<stage>.stak.dynastack.example/ and stak-<stage>.
	StakTokens StakTokens
	// AgenticPM configures AgenticPM's hold-queue release job; zero fields
	// take the defaults of AgenticPMHoldQueue.
	//
	// Default: every AgenticPMHoldQueue default.
	AgenticPM AgenticPMHoldQueue
	// Nucleus configures Nucleus's schedule executor; zero fields take the
	// defaults of NucleusExecutor.
	//
	// Default: every NucleusExecutor default.
	Nucleus NucleusExecutor
	// Alarms are who every alarm of the stage notifies. Required outside
	// dev (ValidateGuardrails).
	//
	// Default: none in dev; OnCallEmail in stage and prod.
	Alarms AlarmSubscribers
	// ReservedConcurrency overrides the reserved concurrency of a function,
	// keyed by its name in its service contract (DYNASTACK_SERVICE); 0
	// leaves it unreserved. A name no contract declares is an error (a
	// misspelt key would otherwise change nothing). See Concurrency for the
	// defaults by kind and their sum.
	//
	// Default: none.
	ReservedConcurrency map[string]int
	// Backup is the stage's AWS Backup plan beyond point-in-time recovery
	// (BackupPlan): daily backups of every table into a vault per service
	// stack, optionally copied to a second Region. Required in prod, with
	// a copy (ValidateGuardrails).
	//
	// Default: none in dev; daily, StageBackupRetentionDays, no copy in
	// stage; daily, ProdBackupRetentionDays, copied to DefaultCopyRegion in
	// prod.
	Backup BackupPlan

	// CORS lets browser pages of the listed origins call a service's HTTP
	// API, keyed by the service's name (CORSFor checks it).
	//
	// Default: none, no browser origin; dev: Stak's end-user routes from
	// LocalOrigins.
	CORS map[string]CORS

	// Rollout is how a new build of the stage's functions reaches the
	// live alias every invoker targets (rollout.go): AllAtOnce, or a
	// CodeDeploy canary whose rollback triggers are the function's alarms.
	//
	// Default: Canary10Percent5Minutes in prod, AllAtOnce in dev and stage.
	Rollout Rollout
}

// OnCallEmail receives the alarms of stage and prod. It is a placeholder
// (example.com never delivers): set the team's on-call address or pager
// webhook here before the first deploy of a stage.
const OnCallEmail = "dynastack-oncall@example.com"

// TableKey names a table in Stage.Tables: service and construct id.
func TableKey(service, id string) string { return service + "/" + id }

// TableName returns the physical-name override of one table of the stage,
// "" when the table keeps its default name.
func (s Stage) TableName(service, id string) string {
	return s.TableNames[TableKey(service, id)]
}

// Overrides returns the overrides for one table of the stage.
func (s Stage) Overrides(service, id string) table.Overrides {
	return s.Tables[TableKey(service, id)]
}

// Stages returns the configuration of every stage in promotion order.
func Stages() []Stage {
	return []Stage{
		// dev fires every 15 minutes so a deployed dev stage shows the
		// pipeline working without waiting for 09:00.
		// dev lets a front end on a developer's machine call Stak's
		// end-user routes (issue 31).
		{Name: table.Dev, RezAgent: RezAgentPipeline{Schedule: Schedule{Expression: "rate(15 minutes)"}},
			CORS: map[string]CORS{stak.Name: endUserCORS(LocalOrigins)}},
		{Name: table.Stg, Alarms: AlarmSubscribers{Emails: []string{OnCallEmail}},
			Backup: BackupPlan{RetentionDays: StageBackupRetentionDays}},
		// prod lists and counts messages by type (issue 17: the index
		// serves GET /messages?message_type= and the metrics by type), and
		// copies its daily backups out of its Region (issue 33).
		{Name: table.Prod, TerminationProtection: true, Alarms: AlarmSubscribers{Emails: []string{OnCallEmail}}, RezAgentMessageTypeIndex: true,
			Backup: BackupPlan{RetentionDays: ProdBackupRetentionDays, CopyRegion: DefaultCopyRegion}},
	}
}

// Lookup returns the configuration of one stage.
func Lookup(name string) (Stage, error) {
	for _, s := range Stages() {
		if string(s.Name) == name {
			return s, nil
		}
	}
	return Stage{}, fmt.Errorf("unknown stage %q: use one of dev, stage, prod", name)
}
