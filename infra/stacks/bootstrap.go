package stacks

import (
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
)

// BootstrapStage is the construct id of the stage holding the bootstrap
// stacks: `cdk deploy 'bootstrap/*'` (docs/deploying.md, "First deploy of
// a new account").
const BootstrapStage = "bootstrap"

// NewBootstrap adds one bootstrap stack per account that is a stage's
// home (config.BootstrapAccounts): GitHub's OIDC provider, and per stage a
// deploy role that this repository's workflow may assume only from a job in
// that stage's GitHub environment (prod: on the release branch only), and
// that may do nothing but assume the CDK bootstrap roles of the accounts
// the stage's stacks deploy to; and a drift role, read-only, for the drift
// workflow's detection job on the release branch. An account that hosts
// a service of a stage at home elsewhere (config.PlacedAccounts) gets the
// stage's drift role too, in the same stack when it is some stage's home,
// in a stack of its own otherwise: cdk drift reads each stack with
// credentials of the stack's own account.
func NewBootstrap(app constructs.Construct, stages []config.Stage) awscdk.Stage {
	stage := awscdk.NewStage(app, jsii.String(BootstrapStage), nil)
	ApplyPolicy(stage)
	groups := config.BootstrapAccounts(stages)
	placed := config.PlacedAccounts(stages)
	accounts := slices.Sorted(maps.Keys(groups))
	for _, acct := range slices.Sorted(maps.Keys(placed)) {
		if _, ok := groups[acct]; !ok {
			accounts = append(accounts, acct)
		}
	}
	for _, acct := range accounts {
		description := "dynastack: GitHub OIDC provider, and the deploy and drift roles of the stages at home in this account"
		var env *awscdk.Environment
		if acct != config.DefaultBootstrapAccount {
			env = &awscdk.Environment{Account: jsii.String(acct)}
			if home, ok := groups[acct]; ok && home[0].Region != "" {
				env.Region = jsii.String(home[0].Region)
			} else if !ok {
				description = "dynastack: GitHub OIDC provider, and the drift roles of the stages with services placed in this account"
				if r := placedRegion(placed[acct][0], acct); r != "" {
					env.Region = jsii.String(r)
				}
			}
		}
		stack := awscdk.NewStack(stage, jsii.String(acct), &awscdk.StackProps{
			StackName:   jsii.String("dynastack-bootstrap"),
			Description: jsii.String(description),
			Env:         env,
		})
		provider := awsiam.NewCfnOIDCProvider(stack, jsii.String("GitHubOIDC"), &awsiam.CfnOIDCProviderProps{
			Url:          jsii.String("https://" + config.GitHubOIDCHost),
			ClientIdList: jsii.Strings(config.GitHubOIDCAudience),
		})
		for _, s := range groups[acct] {
			newDeployRole(stack, provider.AttrArn(), s)
			newDriftRole(stack, provider.AttrArn(), s)
		}
		for _, s := range placed[acct] {
			newDriftRole(stack, provider.AttrArn(), s)
		}
	}
	return stage
}

// placedRegion is the Region of the first of the stage's services placed
// in acct (an account's IAM roles serve every Region; its stack needs one).
func placedRegion(s config.Stage, acct string) string {
	for _, d := range config.PlacedDriftRuns([]config.Stage{s}) {
		if d.Account == acct {
			return d.Region
		}
	}
	return ""
}

// newDeployRole is one stage's deploy role.
func newDeployRole(stack awscdk.Stack, providerARN *string, s config.Stage) {
	subject := config.OIDCSubject(config.GitHubRepository, string(s.Name), config.DeployRef(s.Name))
	aud := map[string]any{config.GitHubOIDCHost + ":aud": config.GitHubOIDCAudience}
	sub := map[string]any{config.GitHubOIDCHost + ":sub": subject}
	conditions := map[string]any{"StringEquals": aud, "StringLike": sub}
	if s.Name == table.Prod {
		// One subject exactly: prod's environment on the release branch.
		for k, v := range sub {
			aud[k] = v
		}
		conditions = map[string]any{"StringEquals": aud}
	}
	role := awsiam.NewRole(stack, jsii.String("Deploy"+title(string(s.Name))), &awsiam.RoleProps{
		RoleName:           jsii.String(config.DeployRoleName(s.Name)),
		Description:        jsii.String(fmt.Sprintf("dynastack %s deploys from %s's GitHub environment %s; assumes the CDK bootstrap roles only", s.Name, config.GitHubRepository, s.Name)),
		AssumedBy:          awsiam.NewWebIdentityPrincipal(providerARN, &conditions),
		MaxSessionDuration: awscdk.Duration_Hours(jsii.Number(2)),
	})
	var resources []*string
	var applies []string
	for _, acct := range s.TargetAccounts() {
		a := acct
		if a == "" {
			a = *awscdk.Aws_ACCOUNT_ID()
		}
		for _, kind := range config.CDKBootstrapRoles {
			resources = append(resources, jsii.String(fmt.Sprintf("arn:%s:iam::%s:role/cdk-%s-%s-role-%s-*", *awscdk.Aws_PARTITION(), a, config.CDKQualifier, kind, a)))
		}
	}
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sts:AssumeRole", "sts:TagSession"),
		Resources: &resources,
	}))
	applies = append(applies, "/^Resource::arn:<AWS::Partition>:iam::.*:role/cdk-"+config.CDKQualifier+"-.*-role-.*-\\*$/")
	suppress(role, suppression{
		id:        "AwsSolutions-IAM5",
		reason:    "The CDK bootstrap roles are named cdk-<qualifier>-<kind>-role-<account>-<region>: the wildcard is the Region, and each statement names the qualifier, the kind and the account.",
		appliesTo: applies,
	})
}

// driftDeniedActions are the reads of stored data that the drift role may
// not make although ReadOnlyAccess allows them: drift detection reads a
// resource's configuration, never its items, messages, objects, secrets or
// log events (and sqs:ReceiveMessage would hide a message from its
// consumer).
var driftDeniedActions = []string{
	"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:PartiQLSelect",
	"dynamodb:GetRecords", "dynamodb:GetShardIterator",
	"s3:GetObject*", "kms:Decrypt", "secretsmanager:GetSecretValue", "ssm:GetParameter*", "sqs:ReceiveMessage",
	"logs:GetLogEvents", "logs:FilterLogEvents", "logs:StartQuery", "logs:StartLiveTail", "logs:GetLogRecord",
}

// newDriftRole is one stage's drift role: `cdk drift` asks CloudFormation
// to compare each resource with its template, and CloudFormation reads the
// resources with the caller's permissions, so the role reads every
// resource type's configuration (ReadOnlyAccess) and no stored data
// (driftDeniedActions). It is trusted by the drift workflow's detection
// job only: this repository, no GitHub environment, the release branch
// (a schedule runs there). It checks the stacks of its own account: the
// CLI's drift uses the credentials it is given, in each stack's account.
func newDriftRole(stack awscdk.Stack, providerARN *string, s config.Stage) {
	conditions := map[string]any{"StringEquals": map[string]any{
		config.GitHubOIDCHost + ":aud": config.GitHubOIDCAudience,
		config.GitHubOIDCHost + ":sub": config.OIDCBranchSubject(config.GitHubRepository, "refs/heads/"+config.ReleaseBranch),
	}}
	role := awsiam.NewRole(stack, jsii.String("Drift"+title(string(s.Name))), &awsiam.RoleProps{
		RoleName:           jsii.String(config.DriftRoleName(s.Name)),
		Description:        jsii.String(fmt.Sprintf("dynastack %s drift detection from %s's drift workflow on %s; reads configuration, not data", s.Name, config.GitHubRepository, config.ReleaseBranch)),
		AssumedBy:          awsiam.NewWebIdentityPrincipal(providerARN, &conditions),
		MaxSessionDuration: awscdk.Duration_Hours(jsii.Number(1)),
		ManagedPolicies:    &[]awsiam.IManagedPolicy{awsiam.ManagedPolicy_FromAwsManagedPolicyName(jsii.String("ReadOnlyAccess"))},
	})
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Effect:    awsiam.Effect_DENY,
		Actions:   jsii.Strings(driftDeniedActions...),
		Resources: jsii.Strings("*"),
	}))
	suppress(role, suppression{
		id:        "AwsSolutions-IAM4",
		reason:    "Drift detection reads every resource type the stacks hold with the caller's permissions: ReadOnlyAccess is AWS's maintained list of those reads; the role's own policy denies the reads of stored data.",
		appliesTo: []string{"Policy::arn:<AWS::Partition>:iam::aws:policy/ReadOnlyAccess"},
	})
}

func title(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
