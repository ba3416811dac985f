package config_test

import (
	"testing"

	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The committed stages' plans are the defaults docs/stage-policy.md lists:
// none in dev, a week without a copy in stage, 35 days copied to a second
// Region in prod, all daily at 05:00 UTC.
func TestBackupDefaults(t *testing.T) {
	want := map[table.Stage]config.BackupPlan{
		table.Dev: {},
		table.Stg: {RetentionDays: 7, Schedule: "cron(0 5 * * ? *)"},
		table.Prod: {RetentionDays: 35, Schedule: "cron(0 5 * * ? *)", CopyRegion: "us-west-2",
			CopyVaultName: "dynastack-prod-copy", CopyRetentionDays: 35},
	}
	for _, s := range config.Stages() {
		assert.Equal(t, want[s.Name], s.BackupFor(), "%s: backup plan with defaults", s.Name)
	}
	custom := config.Stage{Name: table.Stg, Backup: config.BackupPlan{RetentionDays: 14, Schedule: "cron(30 1 * * ? *)",
		CopyRegion: "eu-west-1", CopyVaultName: "team-copies", CopyRetentionDays: 90}}
	assert.Equal(t, custom.Backup, custom.BackupFor(), "set fields are kept")
	assert.False(t, config.Stage{Name: table.Dev}.BackupFor().Enabled(), "dev: a plan")
}

func TestBackupValidation(t *testing.T) {
	ok := []config.Stage{
		{Name: table.Dev},
		{Name: table.Dev, Backup: config.BackupPlan{RetentionDays: 1}},
		{Name: table.Stg, Region: "us-east-1", Backup: config.BackupPlan{RetentionDays: 7, CopyRegion: "us-east-2", CopyRetentionDays: 3}},
		{Name: table.Prod, Region: "eu-central-1", Backup: config.BackupPlan{RetentionDays: 400, CopyRegion: "eu-west-1", CopyVaultName: "dr_vault-1"}},
	}
	for _, s := range ok {
		s.Alarms = config.AlarmSubscribers{Emails: []string{"ops@example.com"}}
		assert.NoError(t, s.ValidateGuardrails(), "%s: %+v", s.Name, s.Backup)
	}
	bad := []struct {
		name  string
		stage config.Stage
		want  string
	}{
		{"prod without a plan", config.Stage{Name: table.Prod},
			"stage prod: Backup.RetentionDays is 0: prod keeps daily backups for at least 35 days, copied to a second Region"},
		{"prod without a copy", config.Stage{Name: table.Prod, Backup: config.BackupPlan{RetentionDays: 35}},
			"stage prod: Backup.CopyRegion is unset: prod copies its backups to a second Region"},
		{"prod shorter than PITR", config.Stage{Name: table.Prod, Backup: config.BackupPlan{RetentionDays: 7, CopyRegion: "us-west-2"}},
			"stage prod: Backup.RetentionDays=7: prod keeps its backups at least 35 days"},
		{"fields without a plan", config.Stage{Name: table.Dev, Backup: config.BackupPlan{CopyRegion: "us-west-2"}},
			"stage dev: Backup.RetentionDays is 0 (no plan) but other backup fields are set"},
		{"negative retention", config.Stage{Name: table.Dev, Backup: config.BackupPlan{RetentionDays: -1}},
			"stage dev: Backup.RetentionDays=-1: use 1 to 36500"},
		{"retention over 100 years", config.Stage{Name: table.Dev, Backup: config.BackupPlan{RetentionDays: 36501}},
			"Backup.RetentionDays=36501: use 1 to 36500"},
		{"rate schedule", config.Stage{Name: table.Dev, Backup: config.BackupPlan{RetentionDays: 7, Schedule: "rate(1 day)"}},
			`Backup.Schedule "rate(1 day)": use an AWS Backup cron expression in UTC`},
		{"five-field cron", config.Stage{Name: table.Dev, Backup: config.BackupPlan{RetentionDays: 7, Schedule: "cron(0 5 * * ?)"}},
			`Backup.Schedule "cron(0 5 * * ?)"`},
		{"copy to the own Region", config.Stage{Name: table.Stg, Region: "us-west-2", Backup: config.BackupPlan{RetentionDays: 7, CopyRegion: "us-west-2"}},
			`stage stage: Backup.CopyRegion "us-west-2" is the stage's own Region`},
		{"copy Region not a Region", config.Stage{Name: table.Stg, Backup: config.BackupPlan{RetentionDays: 7, CopyRegion: "Oregon"}},
			`Backup.CopyRegion "Oregon": use a Region of the stage's partition aws, such as us-west-2`},
		{"copy vault name", config.Stage{Name: table.Stg, Backup: config.BackupPlan{RetentionDays: 7, CopyRegion: "us-west-2", CopyVaultName: "dr vault"}},
			`Backup.CopyVaultName "dr vault": use 2 to 50 of`},
		{"copy retention", config.Stage{Name: table.Stg, Backup: config.BackupPlan{RetentionDays: 7, CopyRegion: "us-west-2", CopyRetentionDays: -3}},
			"Backup.CopyRetentionDays=-3: use 1 to 36500, or 0 for RetentionDays"},
		{"copy settings without a Region", config.Stage{Name: table.Stg, Backup: config.BackupPlan{RetentionDays: 7, CopyVaultName: "dr"}},
			"Backup.CopyVaultName or CopyRetentionDays is set without CopyRegion"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			tt.stage.Alarms = config.AlarmSubscribers{Emails: []string{"ops@example.com"}}
			err := tt.stage.ValidateGuardrails()
			require.Error(t, err, "ValidateGuardrails()")
			assert.ErrorContains(t, err, tt.want, "ValidateGuardrails()")
		})
	}
}
