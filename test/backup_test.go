package test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/stacks"
	"github.com/dynastack/dynastack/test/iameval"
)

// TestBackupPlans reads every stack's AWS Backup plan as synthesized: in a
// stage with a plan (config.BackupPlan), one vault, one plan with one rule
// on the stage's schedule and retention targeting that vault, the copy
// action to the copy Region's vault of the stack's own account in prod,
// and one selection of exactly the stack's tables by ARN; nothing in dev.
func TestBackupPlans(t *testing.T) {
	for _, cfg := range config.Stages() {
		plan := cfg.BackupFor()
		stage := string(cfg.Name)
		for name, tmpl := range asm.Templates[stage] {
			where := stage + "/" + name
			vaults := tmpl.Resources("AWS::Backup::BackupVault")
			plans := tmpl.Resources("AWS::Backup::BackupPlan")
			selections := tmpl.Resources("AWS::Backup::BackupSelection")
			if !plan.Enabled() {
				assert.Empty(t, vaults, "%s: backup vaults without a plan", where)
				assert.Empty(t, plans, "%s: backup plans", where)
				assert.Empty(t, selections, "%s: backup selections", where)
				continue
			}
			require.Len(t, vaults, 1, "%s: backup vaults", where)
			require.Len(t, plans, 1, "%s: backup plans", where)
			require.Len(t, selections, 1, "%s: backup selections", where)
			resources, _ := tmpl["Resources"].(map[string]any)
			stackName := fmt.Sprintf("%s-%s", name, stage)

			vaultID := slices.Collect(maps.Keys(vaults))[0]
			vault := vaults[vaultID]
			assert.Equal(t, stacks.BackupVaultName(stackName), str(props(vault), "BackupVaultName"), "%s: vault name", where)
			assert.Equal(t, "Retain", vault["DeletionPolicy"], "%s: the vault outlives the stack", where)

			planID := slices.Collect(maps.Keys(plans))[0]
			bp, _ := props(plans[planID])["BackupPlan"].(map[string]any)
			assert.Equal(t, stacks.BackupVaultName(stackName), str(bp, "BackupPlanName"), "%s: plan name", where)
			rules := list(bp["BackupPlanRule"])
			require.Len(t, rules, 1, "%s: plan rules", where)
			rule := rules[0]
			assert.Equal(t, plan.Schedule, str(rule, "ScheduleExpression"), "%s: schedule", where)
			assert.Equal(t, map[string]any{"DeleteAfterDays": float64(plan.RetentionDays)}, rule["Lifecycle"], "%s: retention", where)
			assert.Equal(t, map[string]any{"Fn::GetAtt": []any{vaultID, "BackupVaultName"}}, rule["TargetBackupVault"], "%s: the rule's vault", where)

			copies := list(rule["CopyActions"])
			if !plan.Copies() {
				assert.Empty(t, copies, "%s: copy actions", where)
			} else if assert.Len(t, copies, 1, "%s: copy actions", where) {
				dest, err := iameval.Resolve(copies[0]["DestinationBackupVaultArn"], resources, deployEnv)
				require.NoError(t, err, "%s: copy destination", where)
				assert.Equal(t, fmt.Sprintf("arn:aws:backup:%s:%s:backup-vault:%s", plan.CopyRegion, deployEnv.Account, plan.CopyVaultName), dest,
					"%s: the copy goes to the copy Region's vault of the stack's own account", where)
				assert.NotEqual(t, deployEnv.Region, plan.CopyRegion, "%s: the copy leaves the Region", where)
				assert.Equal(t, map[string]any{"DeleteAfterDays": float64(plan.CopyRetentionDays)}, copies[0]["Lifecycle"], "%s: copy retention", where)
			}

			sel := slices.Collect(maps.Values(selections))[0]
			assert.Equal(t, map[string]any{"Fn::GetAtt": []any{planID, "BackupPlanId"}}, props(sel)["BackupPlanId"], "%s: the selection's plan", where)
			bs, _ := props(sel)["BackupSelection"].(map[string]any)
			var want []any
			for id := range tmpl.Resources("AWS::DynamoDB::GlobalTable") {
				want = append(want, map[string]any{"Fn::GetAtt": []any{id, "Arn"}})
			}
			require.NotEmpty(t, want, "%s: tables", where)
			assert.ElementsMatch(t, want, bs["Resources"], "%s: the selection is exactly the stack's tables", where)
			assert.Empty(t, bs["ListOfTags"], "%s: selected by ARN, not by tag", where)
			assert.Empty(t, bs["Conditions"], "%s: selected by ARN, not by condition", where)
		}
	}
}
