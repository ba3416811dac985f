package restoreplan_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/ddbguard"
	"github.com/dynastack/dynastack/infra/restoreplan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func golden(t *testing.T) ddbguard.Set {
	t.Helper()
	root, err := config.RepoRoot()
	require.NoError(t, err)
	set, err := ddbguard.Load(filepath.Join(root, "test", "snapshots"))
	require.NoError(t, err)
	return set
}

func TestPlanRefuses(t *testing.T) {
	set := golden(t)
	tests := []struct {
		name string
		req  restoreplan.Request
		want string
	}{
		{"unknown stage", restoreplan.Request{Stage: "qa", Service: "itsm", Table: "Tickets", Time: "2026-03-09T09:30:00Z"}, "unknown stage"},
		{"unknown service", restoreplan.Request{Stage: "prod", Service: "tickets", Table: "Tickets", Time: "2026-03-09T09:30:00Z"}, "use one of rezagent"},
		{"unknown table", restoreplan.Request{Stage: "prod", Service: "nucleus", Table: "Tickets", Time: "2026-03-09T09:30:00Z"}, "use one of"},
		{"physical name for a table", restoreplan.Request{Stage: "prod", Service: "itsm", Table: "poc-itsm-tickets-prod", Time: "2026-03-09T09:30:00Z"}, "construct id"},
		{"time not RFC 3339", restoreplan.Request{Stage: "prod", Service: "itsm", Table: "Tickets", Time: "2026-03-09 09:30"}, "not RFC 3339"},
		{"time in the future", restoreplan.Request{Stage: "prod", Service: "itsm", Table: "Tickets", Time: "2026-03-11T00:00:00Z"}, "not in the past"},
		{"time past the window", restoreplan.Request{Stage: "prod", Service: "itsm", Table: "Tickets", Time: "2026-01-01T00:00:00Z"}, "35-day recovery window"},
		{"no PITR in dev", restoreplan.Request{Stage: "dev", Service: "itsm", Table: "Tickets", Time: "2026-03-09T09:30:00Z"}, "no point-in-time recovery"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Now = now
			out, err := restoreplan.Plan(set, tt.req)
			require.ErrorIs(t, err, restoreplan.ErrRefused)
			assert.ErrorContains(t, err, tt.want)
			assert.Empty(t, out, "no plan with a refusal")
		})
	}
}

func TestPlanStak(t *testing.T) {
	out, err := restoreplan.Plan(golden(t), restoreplan.Request{Stage: "prod", Service: "stak", Table: "Inbox", Time: "2026-03-09T09:30:00+01:00", Now: now})
	require.NoError(t, err)
	for _, want := range []string{
		"aws dynamodb restore-table-to-point-in-time --source-table-name stak-inbox-prod --target-table-name stak-inbox-r20260309T0830",
		"--restore-date-time 2026-03-09T08:30:00Z --billing-mode-override PAY_PER_REQUEST",
		"--time-to-live-specification Enabled=true,AttributeName=expiredat",
		"--stream-specification StreamEnabled=true,StreamViewType=NEW_AND_OLD_IMAGES",
		"PointInTimeRecoveryEnabled=true,RecoveryPeriodInDays=35",
		"--on-demand-throughput MaxReadRequestUnits=10000,MaxWriteRequestUnits=5000",
		"--deletion-protection-enabled",
		"Key=service,Value=stak", "Key=stage,Value=prod",
		`TableNames: {config.TableKey("stak", "Inbox"): "stak-inbox-r20260309T0830"}`,
		`make adopt STAGE=prod SERVICE=stak DESCRIBE="restored.json restored-ttl.json restored-backups.json restored-tags.json"`,
		"npx cdk orphan --unstable=orphan 'prod/stak/Inbox'",
		"npx cdk import --resource-mapping cdk.out/adopt/prod-stak-stak-inbox-r20260309T0830.resource-mapping.json 'prod/stak'",
		"Re-point Stak's stream consumer",
		"/recount",
		"make migrate STAGE=prod SERVICE=stak CHECK=1",
		"--export-type INCREMENTAL_EXPORT",
		"ExportFromTime=2026-03-09T08:30:00Z",
	} {
		assert.Contains(t, out, want)
	}
}

func TestPlanWithoutStream(t *testing.T) {
	out, err := restoreplan.Plan(golden(t), restoreplan.Request{Stage: "stage", Service: "nucleus", Table: "Audit", Time: "2026-03-09T09:30:00Z", Now: now})
	require.NoError(t, err)
	assert.Contains(t, out, "--source-table-name NucleusAuditTable-stage")
	assert.Contains(t, out, "nothing to re-point")
	assert.NotContains(t, out, "--stream-specification", "no stream on the table")
	assert.NotContains(t, out, "--deletion-protection-enabled", "stage has no deletion protection")
}
