package teamstack_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/constructs/table"

	"example.com/teamstack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

func TestReportingStack(t *testing.T) {
	stack, err := teamstack.NewReportingStack(cdktest.NewApp(t), "Reporting", table.Prod)
	require.NoError(t, err)
	tmpl := cdktest.Template(t, stack)
	cdktest.Assert(t, func() {
		tmpl.ResourceCountIs(jsii.String("AWS::DynamoDB::GlobalTable"), jsii.Number(1))
		tmpl.HasResourceProperties(jsii.String("AWS::DynamoDB::GlobalTable"), map[string]any{
			"TableName": "reporting-scratch-prod",
			"Replicas": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"DeletionProtectionEnabled":        true,
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 35},
			})}),
		})
	})
	policy, _ := json.Marshal(tmpl.FindResources(jsii.String("AWS::IAM::Policy"), nil))
	for _, want := range []string{":table/poc-itsm-tickets-prod", ":table/poc-itsm-tickets-prod/index/CallerIdIndex", "dynamodb:Query"} {
		assert.Contains(t, string(policy), want, "policy")
	}
	assert.NotContains(t, string(policy), `"dynamodb:*"`, "policy grants more than reads by intent")
	assert.NotContains(t, string(policy), "dynamodb:Scan", "policy grants more than reads by intent")
}

func TestReportingStackRejectsUnknownStage(t *testing.T) {
	_, err := teamstack.NewReportingStack(cdktest.NewApp(t), "Reporting", "qa")
	require.Error(t, err, "unknown stage accepted")
}
