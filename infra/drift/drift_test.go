package drift_test

import (
	"os"
	"testing"

	"github.com/dynastack/dynastack/infra/drift"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/cdk-drift.txt is the CLI's format (DriftFormatter of aws-cdk
// 2.1148.1, colours included): three stacks, two drifted.
func parsed(t *testing.T) []drift.Stack {
	t.Helper()
	raw, err := os.ReadFile("testdata/cdk-drift.txt")
	require.NoError(t, err)
	return drift.Parse(string(raw))
}

func TestParse(t *testing.T) {
	stacks := parsed(t)
	require.Len(t, stacks, 3)
	assert.Equal(t, "prod/itsm", stacks[0].Name)
	require.Len(t, stacks[0].Resources, 3, "itsm: two modified, one deleted")
	assert.Equal(t, drift.Resource{Status: "modified", Type: "AWS::DynamoDB::GlobalTable", Path: "Tickets/Table", LogicalID: "TicketsTable7E1B7D5A",
		Properties: []string{"/GlobalSecondaryIndexes/2", "/Replicas/0/PointInTimeRecoverySpecification/PointInTimeRecoveryEnabled", "/Replicas/0/DeletionProtectionEnabled"}}, stacks[0].Resources[0])
	assert.Equal(t, []string{"/MemorySize"}, stacks[0].Resources[1].Properties, "the function's drift")
	assert.Equal(t, "deleted", stacks[0].Resources[2].Status, "the deleted table")
	assert.False(t, stacks[1].Drifted(), "stak: no drift")
	assert.True(t, stacks[2].Drifted(), "agenticpm drifted")
}

func TestTableFindings(t *testing.T) {
	stacks := parsed(t)
	assert.Equal(t, []string{
		"table Tickets/Table (TicketsTable7E1B7D5A): global secondary indexes (an index added, removed or changed by hand: the next deploy may fail or drop it): /GlobalSecondaryIndexes/2",
		"table Tickets/Table (TicketsTable7E1B7D5A): point-in-time recovery (switched off or its period changed: restores may be impossible): /Replicas/0/PointInTimeRecoverySpecification/PointInTimeRecoveryEnabled",
		"table Tickets/Table (TicketsTable7E1B7D5A): deletion protection: /Replicas/0/DeletionProtectionEnabled",
		"table Idempotency/Table (IdempotencyTableA1B2C3D4) was DELETED outside CloudFormation",
	}, drift.TableFindings(stacks[0]), "itsm: the function's memory is not table drift")
	assert.Equal(t, []string{"table Projects/Table (ProjectsTable99): TTL (expired items are kept, or deleted when they should not be): /TimeToLiveSpecification/Enabled"},
		drift.TableFindings(stacks[2]), "agenticpm: TTL")
	assert.Empty(t, drift.TableFindings(stacks[1]), "stak")
}

func TestIssue(t *testing.T) {
	stacks := parsed(t)
	body := drift.Issue(stacks[0], "https://github.com/o/r/actions/runs/1")
	assert.Contains(t, body, "found 3 drifted resource(s) in **prod/itsm** ([run](https://github.com/o/r/actions/runs/1))")
	assert.Contains(t, body, "### Table drift\n\n- table Tickets/Table")
	assert.Contains(t, body, "| modified | AWS::Lambda::Function | Api/Function `ApiFunctionCE271BD4` | /MemorySize |")
	assert.NotContains(t, drift.Issue(stacks[2], ""), "([run]", "no run link without a run")
	assert.Equal(t, "Drift: prod/itsm", drift.Title("prod/itsm"), "a stable title per stack")
	assert.Equal(t, []string{"prod/itsm: 3 drifted resource(s), 4 table finding(s)"}, drift.Summary(stacks[:1])[:1])
	assert.Equal(t, []string{"prod/stak: no drift"}, drift.Summary(stacks[1:2]))
}
