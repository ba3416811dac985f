package table

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
)

// registered remembers the spec and resolved policy of each table made by
// New, by the path of its CfnGlobalTable, so the checks can compare what
// will deploy with what was decided. CDK apps are built on one goroutine
// (jsii is not goroutine-safe), so no lock is needed.
var registered = map[string]registration{}

type registration struct {
	spec   Spec
	policy Policy
}

// policyChecks is an awscdk.IAspect. cdk-nag's DynamoDB rules only inspect
// AWS::DynamoDB::Table; TableV2 synthesizes AWS::DynamoDB::GlobalTable, so
// without these checks an escape hatch could switch off recovery or
// protection unnoticed.
type policyChecks struct{}

// NewPolicyChecks returns the aspect that checks, for every GlobalTable and
// IAM policy in scope:
//   - point-in-time recovery as the stage policy decided (on in stage and
//     prod for tables not made by New);
//   - deletion protection and the RETAIN policy in prod;
//   - TTL enabled on the attribute the spec (the design document) names;
//   - no wildcard DynamoDB action in any IAM policy.
//
// Violations are error annotations, which fail `cdk synth`, each naming the
// construct path and the fix.
func NewPolicyChecks() awscdk.IAspect { return &policyChecks{} }

func (c *policyChecks) Visit(node constructs.IConstruct) {
	switch n := node.(type) {
	case awsdynamodb.CfnGlobalTable:
		checkGlobalTable(n)
	case awsiam.CfnPolicy:
		checkPolicy(n, n.PolicyDocument())
	}
}

func fail(node constructs.IConstruct, format string, args ...any) {
	msg := fmt.Sprintf("[dynastack] %s: %s", *node.Node().Path(), fmt.Sprintf(format, args...))
	awscdk.Annotations_Of(node).AddError(&msg)
}

func checkGlobalTable(n awsdynamodb.CfnGlobalTable) {
	stack := awscdk.Stack_Of(n)
	path := *n.Node().Path()
	reg, known := registered[path]
	stage := Stage(*awscdk.Stage_Of(n).StageName())
	if known {
		stage = reg.policy.Stage
	}
	wantPITR := stage == Stg || stage == Prod
	if known {
		wantPITR = reg.policy.PointInTimeRecovery
	}
	replicas, _ := stack.Resolve(n.Replicas()).([]any)
	if len(replicas) == 0 {
		fail(n, "the table has no replica: TableV2 always renders one; do not override Replicas")
	}
	for _, r := range replicas {
		rm, _ := r.(map[string]any)
		region := field(rm, "region")
		pitr, _ := field(field(rm, "pointInTimeRecoverySpecification"), "pointInTimeRecoveryEnabled").(bool)
		if pitr != wantPITR {
			fail(n, "point-in-time recovery is %v in replica %v, but the %s policy says %v: remove the escape hatch or set Overrides.PointInTimeRecovery", pitr, region, stage, wantPITR)
		}
		if stage == Prod {
			if protected, _ := field(rm, "deletionProtectionEnabled").(bool); !protected {
				fail(n, "deletion protection is off in prod (replica %v): prod tables keep DeletionProtection=true; remove the override", region)
			}
		}
	}
	if stage == Prod {
		opts := n.CfnOptions()
		if opts.DeletionPolicy() != awscdk.CfnDeletionPolicy_RETAIN || opts.UpdateReplacePolicy() != awscdk.CfnDeletionPolicy_RETAIN {
			fail(n, "DeletionPolicy/UpdateReplacePolicy are %v/%v in prod: prod tables are retained; use RemovalPolicy RETAIN", opts.DeletionPolicy(), opts.UpdateReplacePolicy())
		}
	}
	if known && reg.spec.TTLAttribute != "" {
		ttl, _ := stack.Resolve(n.TimeToLiveSpecification()).(map[string]any)
		enabled, _ := field(ttl, "enabled").(bool)
		if attr, _ := field(ttl, "attributeName").(string); !enabled || attr != reg.spec.TTLAttribute {
			fail(n, "TTL is %v on %q, but the %s design expires items by %q: restore TimeToLiveSpecification", enabled, attr, reg.spec.Service, reg.spec.TTLAttribute)
		}
	}
}

func checkPolicy(n constructs.IConstruct, doc any) {
	resolved, _ := awscdk.Stack_Of(n).Resolve(doc).(map[string]any)
	statements, _ := field(resolved, "statement").([]any)
	for _, s := range statements {
		sm, _ := s.(map[string]any)
		if field(sm, "effect") != "Allow" {
			continue
		}
		for _, a := range asStrings(field(sm, "action")) {
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

func asStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
