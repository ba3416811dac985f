package table

import (
	"fmt"
	"strings"

	"github.com/dynastack/dynastack/constructs/policyjson"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// checksID names the child construct that New puts under each TableV2 it
// makes. Its presence tells the aspect that the table carries its own
// validation (the spec and resolved policy travel with the construct, not
// in a package-level registry keyed by path), and it holds that validation.
// A plain Construct renders nothing into the template.
const checksID = "DynastackChecks"

// addChecks attaches the checks of a table made by New to the construct:
// CDK runs them before synthesis (constructs.Node.AddValidation), after the
// aspects and escape hatches have run, and fails synth with their messages.
func addChecks(res awsdynamodb.TableV2, spec Spec, policy Policy) {
	c := constructs.NewConstruct(res, jsii.String(checksID))
	c.Node().AddValidation(&tableChecks{table: res, spec: spec, policy: policy})
}

// tableChecks compares the CfnGlobalTable that will deploy with what New
// decided from the spec (the design document) and the stage policy.
type tableChecks struct {
	table  awsdynamodb.TableV2
	spec   Spec
	policy Policy
}

func (v *tableChecks) Validate() *[]*string {
	cfn, ok := v.table.Node().DefaultChild().(awsdynamodb.CfnGlobalTable)
	if !ok {
		return jsii.Strings(fmt.Sprintf("[dynastack] %s: the table's CfnGlobalTable is missing: do not remove or replace its default child", *v.table.Node().Path()))
	}
	problems := checkGlobalTable(cfn, v.policy.Stage, v.policy.PointInTimeRecovery, v.spec)
	out := make([]*string, len(problems))
	for i, p := range problems {
		out[i] = jsii.String(fmt.Sprintf("[dynastack] %s: %s", *cfn.Node().Path(), p))
	}
	return &out
}

// policyChecks is an awscdk.IAspect. cdk-nag's DynamoDB rules only inspect
// AWS::DynamoDB::Table; TableV2 synthesizes AWS::DynamoDB::GlobalTable, so
// without these checks an escape hatch could switch off recovery or
// protection unnoticed.
type policyChecks struct{}

// NewPolicyChecks returns the aspect that checks, for every GlobalTable not
// made by New (which validates its own against its spec and resolved
// policy) and every IAM policy in scope:
//   - point-in-time recovery on in stage and prod;
//   - deletion protection and the RETAIN policy in prod;
//   - no wildcard DynamoDB action in any IAM policy.
//
// Violations are error annotations, which fail `cdk synth`, each naming the
// construct path and the fix.
func NewPolicyChecks() awscdk.IAspect { return &policyChecks{} }

// CheckPolicies runs the checks of NewPolicyChecks once, now, over every
// construct in scope, adding the same error annotations. It costs one jsii
// call to list the constructs where the aspect costs a callback from the
// jsii kernel per construct (about 0.7 s over the 1,800 constructs of the
// dynastack app's three stages). Call it when scope is complete: unlike the
// aspect, it does not see what is added or overridden afterwards.
func CheckPolicies(scope constructs.IConstruct) {
	c := &policyChecks{}
	for _, n := range *scope.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		c.Visit(n)
	}
}

func (c *policyChecks) Visit(node constructs.IConstruct) {
	switch n := node.(type) {
	case awsdynamodb.CfnGlobalTable:
		if scope := n.Node().Scope(); scope != nil && scope.Node().TryFindChild(jsii.String(checksID)) != nil {
			return // made by New: its own validation checks it
		}
		stage := Stage(*awscdk.Stage_Of(n).StageName())
		for _, p := range checkGlobalTable(n, stage, stage == Stg || stage == Prod, Spec{}) {
			fail(n, "%s", p)
		}
	case awsiam.CfnPolicy:
		checkPolicy(n, n.PolicyDocument())
	}
}

func fail(node constructs.IConstruct, format string, args ...any) {
	msg := fmt.Sprintf("[dynastack] %s: %s", *node.Node().Path(), fmt.Sprintf(format, args...))
	awscdk.Annotations_Of(node).AddError(&msg)
}

// checkGlobalTable returns what n would deploy against the stage's rules:
// point-in-time recovery as wantPITR, protection and retention in prod, and
// TTL on spec.TTLAttribute when the spec names one.
func checkGlobalTable(n awsdynamodb.CfnGlobalTable, stage Stage, wantPITR bool, spec Spec) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	stack := awscdk.Stack_Of(n)
	replicas, _ := stack.Resolve(n.Replicas()).([]any)
	if len(replicas) == 0 {
		add("the table has no replica: TableV2 always renders one; do not override Replicas")
	}
	for _, r := range replicas {
		rm, _ := r.(map[string]any)
		region := field(rm, "region")
		pitr, _ := field(field(rm, "pointInTimeRecoverySpecification"), "pointInTimeRecoveryEnabled").(bool)
		if pitr != wantPITR {
			add("point-in-time recovery is %v in replica %v, but the %s policy says %v: remove the escape hatch or set Overrides.PointInTimeRecovery", pitr, region, stage, wantPITR)
		}
		if stage == Prod {
			if protected, _ := field(rm, "deletionProtectionEnabled").(bool); !protected {
				add("deletion protection is off in prod (replica %v): prod tables keep DeletionProtection=true; remove the override", region)
			}
		}
	}
	if stage == Prod {
		opts := n.CfnOptions()
		if opts.DeletionPolicy() != awscdk.CfnDeletionPolicy_RETAIN || opts.UpdateReplacePolicy() != awscdk.CfnDeletionPolicy_RETAIN {
			add("DeletionPolicy/UpdateReplacePolicy are %v/%v in prod: prod tables are retained; use RemovalPolicy RETAIN", opts.DeletionPolicy(), opts.UpdateReplacePolicy())
		}
	}
	if spec.TTLAttribute != "" {
		ttl, _ := stack.Resolve(n.TimeToLiveSpecification()).(map[string]any)
		enabled, _ := field(ttl, "enabled").(bool)
		if attr, _ := field(ttl, "attributeName").(string); !enabled || attr != spec.TTLAttribute {
			add("TTL is %v on %q, but the %s design expires items by %q: restore TimeToLiveSpecification", enabled, attr, spec.Service, spec.TTLAttribute)
		}
	}
	return problems
}

func checkPolicy(n constructs.IConstruct, doc any) {
	resolved, _ := awscdk.Stack_Of(n).Resolve(doc).(map[string]any)
	statements, _ := field(resolved, "statement").([]any)
	for _, s := range statements {
		sm, _ := s.(map[string]any)
		if field(sm, "effect") != "Allow" {
			continue
		}
		for _, a := range policyjson.Strings(field(sm, "action")) {
			if a == "*" || (strings.HasPrefix(strings.ToLower(a), "dynamodb:") && strings.Contains(a, "*")) {
				fail(n, "IAM action %q is a wildcard over DynamoDB: grant by intent (Table.GrantRead, GrantWrite, GrantReadWrite, GrantStreamRead)", a)
			}
		}
	}
}

// field reads a key of a resolved CloudFormation value whatever its case:
// L2 constructs hand L1s camelCase objects, IAM documents use PascalCase.
func field(v any, key string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	for k, val := range m {
		if strings.EqualFold(k, key) {
			return val
		}
	}
	return nil
}
