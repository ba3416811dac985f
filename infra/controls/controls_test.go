package controls_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/infra/controls"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const root = "../.."

func guard(t *testing.T) (string, []string) {
	t.Helper()
	pkg := filepath.Join(root, "node_modules", "@cdklabs", "cdk-validator-cfnguard")
	bin, rules, err := controls.Guard(pkg)
	require.NoError(t, err, "make test runs make deps first")
	// The golden files and the cfn-guard package are outside this module:
	// the cached result holds for the same tree only (DEVELOPERS.md, "The
	// test cache").
	_ = os.Getenv("DYNASTACK_TREE_HASH") // config.EnvTreeHash; this test links no CDK

	return bin, []string{rules, "rules"}
}

// TestGoldenFilesPassControls runs the real cfn-guard over every golden
// template: no open finding, no stale suppression, and the controls that
// matter for these resources actually applied.
func TestGoldenFilesPassControls(t *testing.T) {
	bin, rules := guard(t)
	templates, err := controls.Templates(filepath.Join(root, "test", "snapshots"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(templates), 15, "templates: want every stack of every stage")
	// The bootstrap stacks too: their deploy and drift roles are IAM's
	// controls' business.
	bootstrap, err := controls.Templates(filepath.Join(root, "test", "bootstrap-snapshots"))
	require.NoError(t, err)
	templates = append(templates, bootstrap...)
	rep, err := controls.Run(bin, rules, templates)
	require.NoError(t, err)
	open, unused := controls.Suppressed(rep.Findings, controls.Suppressions)
	assert.Empty(t, open, "open findings: fix them or suppress them with a reason in suppressions.go")
	for _, s := range unused {
		assert.Fail(t, "suppression covers nothing", "suppression %s on %s covers nothing: remove it", s.Control, s.Type)
	}
	ran := strings.Join(rep.Ran, " ")
	for _, c := range []string{"CT.CLOUDWATCH.PR.1", "CT.LAMBDA.PR.3", "CT.SQS.PR.2", "CT.KMS.PR.1", "CT.IAM.PR.5", "DYNASTACK.GLOBALTABLE.PR.1", "DYNASTACK.GLOBALTABLE.PR.2"} {
		assert.Contains(t, ran, c, "control did not apply to any template")
	}
}

// TestFindsViolations: a template breaking controls yields findings naming
// the control, stage, stack and resource, and suppressions do not hide
// them.
func TestFindsViolations(t *testing.T) {
	bin, rules := guard(t)
	dir := filepath.Join(t.TempDir(), "prod")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	const tmpl = `{"Resources": {
  "Quiet": {"Type": "AWS::CloudWatch::Alarm", "Properties": {"ComparisonOperator": "GreaterThanThreshold", "EvaluationPeriods": 1, "MetricName": "Errors", "Namespace": "AWS/Lambda", "Period": 300, "Statistic": "Sum", "Threshold": 1}},
  "Plain": {"Type": "AWS::DynamoDB::GlobalTable", "Properties": {"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST",
    "Replicas": [{"Region": "eu-west-1", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": false}}], "SSESpecification": {"SSEEnabled": false}}},
  "Work": {"Type": "AWS::SQS::Queue", "Properties": {"SqsManagedSseEnabled": true}}
}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rezagent.template.json"), []byte(tmpl), 0o644))
	templates, err := controls.Templates(filepath.Dir(dir))
	require.NoError(t, err)
	rep, err := controls.Run(bin, rules, templates)
	require.NoError(t, err)
	open, _ := controls.Suppressed(rep.Findings, controls.Suppressions)
	var got []string
	for _, f := range open {
		got = append(got, f.String())
	}
	for _, want := range []string{
		"CT.CLOUDWATCH.PR.1 prod/rezagent Quiet (AWS::CloudWatch::Alarm)",
		"DYNASTACK.GLOBALTABLE.PR.1 prod/rezagent Plain (AWS::DynamoDB::GlobalTable)",
		"DYNASTACK.GLOBALTABLE.PR.2 prod/rezagent Plain (AWS::DynamoDB::GlobalTable)",
		// A work queue without a dead-letter queue: the failure-queue
		// suppression names failure queues only.
		"CT.SQS.PR.1 prod/rezagent Work (AWS::SQS::Queue)",
	} {
		assert.Contains(t, strings.Join(got, "\n"), want, "missing open finding")
	}
}

func TestSuppressed(t *testing.T) {
	list := []controls.Suppression{
		{Control: "CT.A.PR.1", Type: "AWS::X::Y", Reason: "r"},
		{Control: "CT.B.PR.1", Type: "AWS::X::Y", Stages: []string{"dev"}, Reason: "r"},
		{Control: "CT.C.PR.1", Type: "AWS::X::Y", Stacks: []string{"itsm"}, Resource: regexp.MustCompile(`^Fail`), Reason: "r"},
		{Control: "CT.D.PR.1", Type: "AWS::X::Y", Reason: "stale"},
	}
	findings := []controls.Finding{
		{Control: "CT.A.PR.1", Stage: "prod", Stack: "stak", Resource: "R1", Type: "AWS::X::Y"},        // covered
		{Control: "CT.A.PR.1", Stage: "prod", Stack: "stak", Resource: "R1", Type: "AWS::Other::Z"},    // other type
		{Control: "CT.B.PR.1", Stage: "dev", Stack: "stak", Resource: "R1", Type: "AWS::X::Y"},         // covered
		{Control: "CT.B.PR.1", Stage: "prod", Stack: "stak", Resource: "R1", Type: "AWS::X::Y"},        // other stage
		{Control: "CT.C.PR.1", Stage: "prod", Stack: "itsm", Resource: "Failures1", Type: "AWS::X::Y"}, // covered
		{Control: "CT.C.PR.1", Stage: "prod", Stack: "itsm", Resource: "Work1", Type: "AWS::X::Y"},     // other resource
		{Control: "CT.C.PR.1", Stage: "prod", Stack: "stak", Resource: "Failures1", Type: "AWS::X::Y"}, // other stack
	}
	open, unused := controls.Suppressed(findings, list)
	assert.Len(t, open, 4, "open: want the 4 uncovered findings")
	if assert.Len(t, unused, 1, "unused: want the stale suppression") {
		assert.Equal(t, "stale", unused[0].Reason, "unused: want the stale suppression")
	}
}

// TestSuppressionsHaveReasons: each suppression names one control and
// resource type and says why, as cdk-nag's suppressions must.
func TestSuppressionsHaveReasons(t *testing.T) {
	control := regexp.MustCompile(`^(CT|DYNASTACK)\.[A-Z0-9-]+\.PR\.[0-9]+$`)
	for _, s := range controls.Suppressions {
		assert.Regexp(t, control, s.Control, "suppression %q on %q: name a control (CT.X.PR.N)", s.Control, s.Type)
		assert.True(t, strings.HasPrefix(s.Type, "AWS::"), "suppression %q on %q: name a resource type", s.Control, s.Type)
		assert.GreaterOrEqual(t, len(s.Reason), 60, "suppression %s on %s: reason %q is too short to say why the control does not apply", s.Control, s.Type, s.Reason)
	}
}
