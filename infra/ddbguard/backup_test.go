package ddbguard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backupID is the logical id of the golden template's one resource of typ.
func backupID(t *testing.T, tm tpl, typ string) string {
	t.Helper()
	var ids []string
	for id, r := range resources(tm) {
		if r.(map[string]any)["Type"] == typ {
			ids = append(ids, id)
		}
	}
	require.Len(t, ids, 1, "%s resources in the golden template", typ)
	return ids[0]
}

// planRule is the golden plan's one rule.
func planRule(t *testing.T, tm tpl) map[string]any {
	t.Helper()
	plan := props(tm, backupID(t, tm, backupPlan))["BackupPlan"].(map[string]any)
	rules := list(plan["BackupPlanRule"])
	require.Len(t, rules, 1, "golden plan rules")
	return rules[0].(map[string]any)
}

// TestBackupChanges: the stage policy's AWS Backup resources, added,
// removed and weakened, against the golden templates that carry them
// (stage and prod).
func TestBackupChanges(t *testing.T) {
	removeBackups := func(tm tpl) {
		for _, typ := range []string{backupSelection, backupPlan, backupVault} {
			delete(resources(tm), backupID(t, tm, typ))
		}
	}
	t.Run("a new plan is safe and listed", func(t *testing.T) {
		r := compareEdited(t, "prod", "itsm", func(o, _ tpl) { removeBackups(o) })
		require.Empty(t, r.Hazards, "hazards:\n%s", lines(r.Hazards))
		var got []string
		for _, c := range r.Changes {
			got = append(got, c.Detail)
		}
		require.Len(t, got, 3, "changes: %v", got)
		assert.Contains(t, got, "new backup vault dynastack-itsm-prod", "changes")
		assert.Contains(t, got, "new backup selection dynastack-itsm-prod-tables of 1 resource", "changes")
		plan := strings.Join(got, "\n")
		assert.Contains(t, plan, "new backup plan dynastack-itsm-prod (cron(0 5 * * ? *), 35 days, copied for 35 days to ", "changes")
		assert.Contains(t, plan, "backup-vault:dynastack-prod-copy", "changes")
	})

	for _, tc := range []struct {
		name  string
		stage string
		edit  edit
		want  Class
		in    string
	}{
		{"plan removed", "prod", func(_, n tpl) { delete(resources(n), backupID(t, n, backupPlan)) }, BackupRemoved, "removed backup plan dynastack-itsm-prod"},
		{"vault removed", "stage", func(_, n tpl) { delete(resources(n), backupID(t, n, backupVault)) }, BackupRemoved, "removed backup vault dynastack-itsm-stage"},
		{"retention lowered", "prod", func(_, n tpl) {
			planRule(t, n)["Lifecycle"] = map[string]any{"DeleteAfterDays": float64(7)}
		}, BackupWeakened, "rule Daily keeps backups 7 days instead of 35"},
		{"copy dropped", "prod", func(_, n tpl) { delete(planRule(t, n), "CopyActions") }, BackupWeakened, "rule Daily no longer copies to "},
		{"copy kept fewer days", "prod", func(_, n tpl) {
			list(planRule(t, n)["CopyActions"])[0].(map[string]any)["Lifecycle"] = map[string]any{"DeleteAfterDays": float64(1)}
		}, BackupWeakened, "rule Daily keeps copies 1 days instead of 35"},
		{"table left out of the selection", "stage", func(_, n tpl) {
			sel := props(n, backupID(t, n, backupSelection))["BackupSelection"].(map[string]any)
			sel["Resources"] = []any{}
		}, BackupWeakened, `no longer selects {"Fn::GetAtt":["` + tickets + `","Arn"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := compareEdited(t, tc.stage, "itsm", tc.edit)
			require.Equal(t, []Class{tc.want}, classes(r.Hazards), "hazards:\n%s", lines(r.Hazards))
			assert.Contains(t, r.Hazards[0].String(), tc.in, "hazard")
			assert.Equal(t, "itsm", r.Hazards[0].Stack, "hazard %s", r.Hazards[0])
		})
	}

	t.Run("a longer retention is a safe change", func(t *testing.T) {
		r := compareEdited(t, "prod", "itsm", func(_, n tpl) {
			planRule(t, n)["Lifecycle"] = map[string]any{"DeleteAfterDays": float64(90)}
		})
		require.Empty(t, r.Hazards, "hazards:\n%s", lines(r.Hazards))
		require.Len(t, r.Changes, 1, "changes")
		assert.Contains(t, r.Changes[0].Detail, "changed backup plan dynastack-itsm-prod (cron(0 5 * * ? *), 90 days", "change")
	})
}
