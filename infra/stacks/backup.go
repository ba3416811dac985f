package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsbackup"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/infra/config"
)

// addBackup gives the stack the stage's AWS Backup plan (config.BackupPlan):
// a vault of its own, a plan with one daily rule (and its copy to the
// second Region's vault), and a selection of exactly the stack's tables by
// ARN. Everything is inside the stack: the copy vault is named by the
// stack's own partition and account, so a service moved to another
// account backs up there. A stage without a plan gets nothing.
func addBackup(stack awscdk.Stack, cfg config.Stage) {
	plan := cfg.BackupFor()
	if !plan.Enabled() {
		return
	}
	var tables []awsbackup.BackupResource
	for _, c := range *stack.Node().Children() {
		if t, ok := c.(awsdynamodb.TableV2); ok {
			tables = append(tables, awsbackup.BackupResource_FromArn(t.TableArn()))
		}
	}
	if len(tables) == 0 {
		return
	}
	name := BackupVaultName(*stack.StackName())
	vault := awsbackup.NewBackupVault(stack, jsii.String("BackupVault"), &awsbackup.BackupVaultProps{
		BackupVaultName: jsii.String(name),
		// Recovery points outlive the stack: a vault that holds any cannot
		// be deleted, and the backups are what a lost stack is restored
		// from.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	rule := &awsbackup.BackupPlanRuleProps{
		RuleName:           jsii.String("Daily"),
		ScheduleExpression: awsevents.Schedule_Expression(jsii.String(plan.Schedule)),
		DeleteAfter:        awscdk.Duration_Days(jsii.Number(plan.RetentionDays)),
	}
	if plan.Copies() {
		dest := stack.FormatArn(&awscdk.ArnComponents{
			Service:      jsii.String("backup"),
			Region:       jsii.String(plan.CopyRegion),
			Resource:     jsii.String("backup-vault"),
			ResourceName: jsii.String(plan.CopyVaultName),
			ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
		})
		rule.CopyActions = &[]*awsbackup.BackupPlanCopyActionProps{{
			DestinationBackupVault: awsbackup.BackupVault_FromBackupVaultArn(stack, jsii.String("BackupCopyVault"), dest),
			DeleteAfter:            awscdk.Duration_Days(jsii.Number(plan.CopyRetentionDays)),
		}}
	}
	bp := awsbackup.NewBackupPlan(stack, jsii.String("BackupPlan"), &awsbackup.BackupPlanProps{
		BackupPlanName:  jsii.String(name),
		BackupVault:     vault,
		BackupPlanRules: &[]awsbackup.BackupPlanRule{awsbackup.NewBackupPlanRule(rule)},
	})
	sel := bp.AddSelection(jsii.String("Tables"), &awsbackup.BackupSelectionOptions{
		BackupSelectionName: jsii.String(name + "-tables"),
		Resources:           &tables,
	})
	suppress(sel, suppression{
		id: "AwsSolutions-IAM4",
		reason: "AWS Backup's service role policy (AWSBackupServiceRolePolicyForBackup) is what AWS Backup documents for a selection's role: " +
			"it follows the permissions each resource type's backup and copy need, which a hand-kept copy would miss; the role is assumable by AWS Backup only.",
		appliesTo: []string{"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup"},
	})
}

// BackupVaultName is the name of a stack's backup vault and plan: one per
// service stack, "dynastack-<stack name>" (dynastack-itsm-prod).
func BackupVaultName(stackName string) string { return fmt.Sprintf("dynastack-%s", stackName) }
