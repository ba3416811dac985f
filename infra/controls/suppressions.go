package controls

import (
	"regexp"
	"slices"

	agenticpm "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	itsm "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleus "github.com/dynastack/dynastack/constructs/nucleus/contract"
	stak "github.com/dynastack/dynastack/constructs/stak/contract"
)

// Suppression is a reviewed exception to one control. It covers a finding
// when the control matches, the resource is of Type, and — where set — the
// stage is one of Stages, the stack one of Stacks and the logical id
// matches Resource. Reason says why the control does not apply here.
type Suppression struct {
	Control  string
	Type     string
	Stages   []string
	Stacks   []string
	Resource *regexp.Regexp
	Reason   string
}

func (s Suppression) covers(f Finding) bool {
	return s.Control == f.Control && s.Type == f.Type &&
		(len(s.Stages) == 0 || slices.Contains(s.Stages, f.Stage)) &&
		(len(s.Stacks) == 0 || slices.Contains(s.Stacks, f.Stack)) &&
		(s.Resource == nil || s.Resource.MatchString(f.Resource))
}

// Suppressions are every accepted Control Tower finding of the app, each
// as narrow as the reason. A finding not covered here fails make synth and
// make test; a suppression covering nothing fails them too.
var Suppressions = []Suppression{
	{
		Control: "CT.LAMBDA.PR.2", Type: "AWS::Lambda::Permission",
		Reason: "API Gateway's invoke permissions name the principal apigateway.amazonaws.com and a SourceArn of this API's own execute-api ARN; the rule accepts a SourceArn only as a literal string or a Ref/GetAtt, and an environment-agnostic stack can only build it with Fn::Join.",
	},
	{
		Control: "CT.LAMBDA.PR.3", Type: "AWS::Lambda::Function",
		Reason: "The functions reach only DynamoDB, SNS, SQS, SSM and ntfy through public AWS and HTTPS endpoints, with IAM on every AWS call; no resource of theirs sits in a VPC, and a VPC would add NAT or endpoint cost for no private reach.",
	},
	{
		Control: "CT.CLOUDWATCH.PR.2", Type: "AWS::Logs::LogGroup",
		Reason: "Log retention is stage policy (1 week dev, 1 month stage, 6 months prod; docs/stage-policy.md): function and access logs are for operating the services, while the one-year audit trail lives in CloudTrail and Nucleus's audit table.",
	},
	{
		Control: "CT.CLOUDWATCH.PR.3", Type: "AWS::Logs::LogGroup",
		Reason: "CloudWatch Logs encrypts every log group at rest with a service key; a customer key per log group would add a KMS key's cost per group and no access control beyond the logs: IAM permissions that already guard them.",
	},
	{
		Control: "CT.SQS.PR.1", Type: "AWS::SQS::Queue",
		Resource: regexp.MustCompile(`^([A-Za-z]+Failures|NotificationsDLQ)[0-9A-F]{8}$`),
		Reason:   "Failure and dead-letter queues are the last stop, read by people and alarmed on depth (docs/functions.md); a dead-letter queue behind them would only move the same records again.",
	},
	{
		Control: "DYNASTACK.GLOBALTABLE.PR.1", Type: "AWS::DynamoDB::GlobalTable", Stages: []string{"dev"},
		Reason: "Stage policy: dev tables hold disposable data and are destroyed with the stack, so point-in-time recovery is off in dev only (on, 35 days, in stage and prod; AgenticPM's document requires it everywhere and has it).",
	},
	{
		Control: "DYNASTACK.GLOBALTABLE.PR.2", Type: "AWS::DynamoDB::GlobalTable", Stacks: []string{nucleus.Name, stak.Name, itsm.Name, agenticpm.Name},
		Reason: "Documents 001–004 name no key, so these tables keep DynamoDB's AWS-owned key (encrypted at rest, no KMS cost, no per-use CloudTrail record); rez_agent's document 000 names the AWS-managed key and gets it. A stage that must audit key use sets Overrides.Encryption.",
	},
}
