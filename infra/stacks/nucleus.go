package stacks

import (
	"errors"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/constructs/nucleus"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/infra/config"
)

// nucleusExecutorTimeoutSecs bounds one run: its AWS calls are sequential,
// about a tenth of a second each. It stays below the 15-minute claim lease
// of an execution, so a live run never loses its claim.
const nucleusExecutorTimeoutSecs = 300

func buildNucleus(stack awscdk.Stack, cfg config.Stage) error {
	exec := cfg.Nucleus.WithDefaults()
	if err := exec.Validate(); err != nil {
		return err
	}
	app, appErr := nucleus.NewAppTable(stack, "App", props(cfg, nucleuscontract.Name, "App"))
	audit, auditErr := nucleus.NewAuditTable(stack, "Audit", props(cfg, nucleuscontract.Name, "Audit"))
	if err := errors.Join(appErr, auditErr); err != nil {
		return err
	}
	pattern := map[string]*string{nucleuscontract.EnvRolePattern: jsii.String(exec.RoleNamePattern)}
	// Every change is written together with its audit entry, in one
	// transaction. The audit log is append-only: put and query, never
	// update or delete.
	apis, err := addAPI(stack, cfg, function{
		id: "Handler", fn: nucleuscontract.API,
		tables: []access{
			{app, nucleuscontract.EnvAppTable, exactly([]string{ddbCheck, ddbDelete, ddbGet, ddbPut, ddbQuery, ddbUpdate}, nucleuscontract.IndexGSI1)},
			{audit, nucleuscontract.EnvAuditTable, exactly([]string{ddbPut, ddbQuery}, nucleuscontract.IndexGSI1)},
		},
		env: pattern,
	}, nil)
	if err != nil {
		return err
	}
	api := apis[0]
	grantAssumeRoles(stack, api, exec.RoleNamePattern, "the connection test (POST /accounts/{id}/test)")
	// The executor lists schedules on GSI1, reads a schedule's partition
	// and accounts, and records each action in a transaction (audit and
	// marker Puts, the ECS count Update on the resource item); on the
	// audit table it reads and claims markers. Nothing else.
	executor, err := addScheduled(stack, cfg, function{
		id: "Executor", fn: nucleuscontract.Executor,
		tables: []access{
			{app, nucleuscontract.EnvAppTable, exactly([]string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem"}, nucleuscontract.IndexGSI1)},
			{audit, nucleuscontract.EnvAuditTable, exactly([]string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"})},
		},
		env:            map[string]*string{nucleuscontract.EnvRolePattern: jsii.String(exec.RoleNamePattern), nucleuscontract.EnvLookBack: jsii.String(exec.LookBack.String())},
		timeoutSeconds: nucleusExecutorTimeoutSecs,
	}, exec.Schedule)
	if err != nil {
		return err
	}
	grantAssumeRoles(stack, executor, exec.RoleNamePattern, "each managed account's role, to start and stop its resources")
	alarmFailedResourceActions(stack, "Executor")
	return nil
}

// grantAssumeRoles allows sts:AssumeRole on roles named by pattern in any
// account, and nothing else of STS: the managed accounts are not known at
// deploy time, the role name is what they agree on.
func grantAssumeRoles(stack awscdk.Stack, fn *gofunction.Function, pattern, why string) {
	arn := stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("iam"), Region: jsii.String(""), Account: jsii.String("*"),
		Resource: jsii.String("role"), ResourceName: jsii.String(pattern)})
	fn.Function.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sts:AssumeRole"),
		Resources: &[]*string{arn},
	}))
	// IAM's * spans '/': role/nucleus-executor-* also matches a role under
	// a path (role/nucleus-executor-x/OrgAdmin is OrgAdmin under the path
	// /nucleus-executor-x/). A role name holds no '/', so role/*/* is
	// exactly the roles with a path, and an explicit deny wins over the
	// allow. The API refuses such ARNs too.
	fn.Function.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:     jsii.String("NoRoleUnderAPath"),
		Effect:  awsiam.Effect_DENY,
		Actions: jsii.Strings("sts:AssumeRole"),
		Resources: &[]*string{stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("iam"), Region: jsii.String(""), Account: jsii.String("*"),
			Resource: jsii.String("role"), ResourceName: jsii.String("*/*")})},
	}))
	suppress(fn.Role, suppression{
		id: "AwsSolutions-IAM5",
		reason: "sts:AssumeRole for " + why + ": the accounts Nucleus manages are registered at run time, so the account is *; " +
			"the role name is fixed by the configured pattern " + pattern + ", which each account's trust policy pairs with this function's role.",
		appliesTo: []string{"Resource::arn:<AWS::Partition>:iam::*:role/" + pattern},
	})
}
