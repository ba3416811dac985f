package table_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stagedStack is a stack inside a stage, as in the dynastack app, with the
// policy checks applied as an aspect, or none (for CheckPolicies).
func stagedStack(t *testing.T, stage table.Stage, aspect bool) awscdk.Stack {
	st := awscdk.NewStage(cdktest.NewApp(t), jsii.String(string(stage)), nil)
	if aspect {
		awscdk.Aspects_Of(st).Add(table.NewPolicyChecks(), nil)
	}
	return awscdk.NewStack(st, jsii.String("svc"), nil)
}

// policyErrors synthesizes the stack and returns the dynastack error
// annotations. Synthesis fails on error annotations and leaves them in the
// validation report, so that is where they are read from.
func policyErrors(t *testing.T, stack awscdk.Stack) []string {
	t.Helper()
	var failure string
	func() {
		defer func() {
			if r := recover(); r != nil {
				failure = fmt.Sprint(r)
			}
		}()
		// Annotations synthesizes with validation, which refuses errors.
		assertions.Annotations_FromStack(stack)
	}()
	if failure == "" {
		return nil
	}
	// A table made by New validates itself (Node.AddValidation): CDK stops
	// synthesis with the messages, one "[path] message" line each.
	if strings.Contains(failure, "Validation failed with the following errors") {
		var out []string
		for _, line := range strings.Split(failure, "\n") {
			if _, msg, ok := strings.Cut(line, "] [dynastack]"); ok {
				out = append(out, "[dynastack]"+msg)
			}
		}
		require.NotEmpty(t, out, "validation failed without dynastack findings: %s", failure)
		return out
	}
	m := regexp.MustCompile(`found in: (\S+validation-report\.json)`).FindStringSubmatch(failure)
	require.NotNil(t, m, "synth failed without a validation report: %s", failure)
	raw, err := os.ReadFile(m[1])
	require.NoError(t, err)
	var report struct {
		PluginReports []struct {
			Violations []struct {
				Description         string
				ViolatingConstructs []struct{ ConstructPath string }
			}
		}
	}
	require.NoError(t, json.Unmarshal(raw, &report))
	var out []string
	for _, p := range report.PluginReports {
		for _, v := range p.Violations {
			if strings.Contains(v.Description, "[dynastack]") {
				out = append(out, v.Description)
			}
		}
	}
	return out
}

func TestPolicyChecks(t *testing.T) {
	tests := []struct {
		name  string
		stage table.Stage
		build func(t *testing.T, stack awscdk.Stack)
		want  string // "" means no finding
	}{
		{"New in prod is clean", table.Prod, func(t *testing.T, s awscdk.Stack) {
			mustNew(t, s, validSpec(), table.Prod)
		}, ""},
		{"New in dev is clean", table.Dev, func(t *testing.T, s awscdk.Stack) {
			mustNew(t, s, validSpec(), table.Dev)
		}, ""},
		{"recovery switched off by escape hatch", table.Stg, func(t *testing.T, s awscdk.Stack) {
			tb := mustNew(t, s, validSpec(), table.Stg)
			cfn := tb.Resource.Node().DefaultChild().(awsdynamodb.CfnGlobalTable)
			cfn.SetReplicas(&[]any{&awsdynamodb.CfnGlobalTable_ReplicaSpecificationProperty{
				Region:                           jsii.String("us-east-1"),
				PointInTimeRecoverySpecification: &awsdynamodb.CfnGlobalTable_PointInTimeRecoverySpecificationProperty{PointInTimeRecoveryEnabled: jsii.Bool(false)},
			}})
		}, "point-in-time recovery is false in replica us-east-1, but the stage policy says true"},
		{"raw TableV2 in prod without protection", table.Prod, func(t *testing.T, s awscdk.Stack) {
			awsdynamodb.NewTableV2(s, jsii.String("Raw"), &awsdynamodb.TablePropsV2{
				PartitionKey:  &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
				RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
			})
		}, "deletion protection is off in prod"},
		{"raw TableV2 in prod is destroyed", table.Prod, func(t *testing.T, s awscdk.Stack) {
			awsdynamodb.NewTableV2(s, jsii.String("Raw"), &awsdynamodb.TablePropsV2{
				PartitionKey:                     &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
				RemovalPolicy:                    awscdk.RemovalPolicy_DESTROY,
				DeletionProtection:               jsii.Bool(true),
				PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)},
			})
		}, "DeletionPolicy/UpdateReplacePolicy are DELETE/DELETE in prod"},
		{"raw TableV2 in stage without recovery", table.Stg, func(t *testing.T, s awscdk.Stack) {
			awsdynamodb.NewTableV2(s, jsii.String("Raw"), &awsdynamodb.TablePropsV2{
				PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
			})
		}, "point-in-time recovery is false"},
		{"TTL switched off", table.Dev, func(t *testing.T, s awscdk.Stack) {
			tb := mustNew(t, s, validSpec(), table.Dev)
			cfn := tb.Resource.Node().DefaultChild().(awsdynamodb.CfnGlobalTable)
			cfn.SetTimeToLiveSpecification(&awsdynamodb.CfnGlobalTable_TimeToLiveSpecificationProperty{Enabled: jsii.Bool(false)})
		}, `TTL is false on "", but the orders design expires items by "expires_at"`},
		{"prod retain dropped", table.Prod, func(t *testing.T, s awscdk.Stack) {
			tb := mustNew(t, s, validSpec(), table.Prod)
			tb.Resource.Node().DefaultChild().(awscdk.CfnResource).CfnOptions().SetDeletionPolicy(awscdk.CfnDeletionPolicy_DELETE)
		}, "DeletionPolicy/UpdateReplacePolicy are DELETE/RETAIN in prod"},
		{"wildcard action", table.Dev, func(t *testing.T, s awscdk.Stack) {
			tb := mustNew(t, s, validSpec(), table.Dev)
			role := newRole(s)
			role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   jsii.Strings("dynamodb:*"),
				Resources: &[]*string{tb.Arn()},
			}))
		}, `IAM action "dynamodb:*" is a wildcard over DynamoDB`},
		{"recovery off by the stage's override is clean", table.Stg, func(t *testing.T, s awscdk.Stack) {
			_, err := table.New(s, "Orders", validSpec(), table.Props{Stage: table.Stg,
				Overrides: table.Overrides{PointInTimeRecovery: jsii.Bool(false)}})
			require.NoError(t, err)
		}, ""},
		{"raw TableV2 beside a New table is still checked", table.Stg, func(t *testing.T, s awscdk.Stack) {
			mustNew(t, s, validSpec(), table.Stg)
			awsdynamodb.NewTableV2(s, jsii.String("Raw"), &awsdynamodb.TablePropsV2{
				PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pk"), Type: awsdynamodb.AttributeType_STRING},
			})
		}, "svc/Raw/Resource: point-in-time recovery is false"},
		{"intent grants are clean", table.Dev, func(t *testing.T, s awscdk.Stack) {
			tb := mustNew(t, s, validSpec(), table.Dev)
			tb.GrantReadWrite(newRole(s))
		}, ""},
	}
	// Each case runs with the aspect and with CheckPolicies over the
	// complete stage (what the dynastack app does): same findings.
	for _, tt := range tests {
		for _, aspect := range []bool{true, false} {
			name := tt.name + "/aspect"
			if !aspect {
				name = tt.name + "/one pass"
			}
			t.Run(name, func(t *testing.T) { testPolicyCase(t, tt.stage, tt.build, tt.want, aspect) })
		}
	}
}

func testPolicyCase(t *testing.T, stage table.Stage, build func(*testing.T, awscdk.Stack), want string, aspect bool) {
	stack := stagedStack(t, stage, aspect)
	build(t, stack)
	if !aspect {
		table.CheckPolicies(stack.Node().Scope())
	}
	errs := policyErrors(t, stack)
	if want == "" {
		require.Empty(t, errs, "unexpected findings")
		return
	}
	joined := strings.Join(errs, "\n")
	require.Contains(t, joined, want, "findings")
	assert.Contains(t, joined, "/svc/", "finding does not name the construct path")
}

func mustNew(t *testing.T, s awscdk.Stack, spec table.Spec, stage table.Stage) *table.Table {
	t.Helper()
	tb, err := table.New(s, "Orders", spec, table.Props{Stage: stage})
	require.NoError(t, err)
	return tb
}
