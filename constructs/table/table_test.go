package table_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

// only returns the single resource of a type in a synthesized template.
func only(t *testing.T, tmpl map[string]any, cfnType string) map[string]any {
	t.Helper()
	var found []map[string]any
	res, _ := tmpl["Resources"].(map[string]any)
	for _, r := range res {
		if m := r.(map[string]any); m["Type"] == cfnType {
			found = append(found, m)
		}
	}
	require.Len(t, found, 1, "resources of type %s", cfnType)
	return found[0]["Properties"].(map[string]any)
}

func count(tmpl map[string]any, cfnType string) int {
	n := 0
	res, _ := tmpl["Resources"].(map[string]any)
	for _, r := range res {
		if r.(map[string]any)["Type"] == cfnType {
			n++
		}
	}
	return n
}

func TestNewAppliesPolicyAndOverrides(t *testing.T) {
	// A customer-managed key needs a concrete region.
	stack := awscdk.NewStack(cdktest.NewApp(t), jsii.String("Test"), &awscdk.StackProps{Env: &awscdk.Environment{Region: jsii.String("us-east-1")}})
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	_, err := table.New(stack, "Orders", validSpec(), table.Props{
		Stage: table.Dev,
		Overrides: table.Overrides{
			PointInTimeRecovery: ptr(true),
			Stream:              ptr(table.NewImage),
			Encryption:          ptr(table.CustomerManaged),
			EncryptionKey:       key,
			Tags:                map[string]string{"team": "payments"},
		},
	})
	require.NoError(t, err)
	p := only(t, cdktest.JSON(t, stack), "AWS::DynamoDB::GlobalTable")
	assert.Equal(t, "orders-dev", p["TableName"], "TableName")
	s := p["StreamSpecification"].(map[string]any)
	assert.Equal(t, "NEW_IMAGE", s["StreamViewType"], "stream = %v", s)
	sse := p["SSESpecification"].(map[string]any)
	assert.Equal(t, true, sse["SSEEnabled"], "SSESpecification = %v, want KMS", sse)
	assert.Equal(t, "KMS", sse["SSEType"], "SSESpecification = %v, want KMS", sse)
	replica := p["Replicas"].([]any)[0].(map[string]any)
	pitr := replica["PointInTimeRecoverySpecification"].(map[string]any)
	assert.Equal(t, true, pitr["PointInTimeRecoveryEnabled"], "PITR = %v, want on for 35 days", pitr)
	assert.Equal(t, float64(35), pitr["RecoveryPeriodInDays"], "PITR = %v, want on for 35 days", pitr)
	tags := fmt.Sprint(replica["Tags"])
	for _, want := range []string{"Key:service Value:orders", "Key:stage Value:dev", "Key:team Value:payments"} {
		assert.Contains(t, tags, want)
	}
	ttl := p["TimeToLiveSpecification"].(map[string]any)
	assert.Equal(t, "expires_at", ttl["AttributeName"], "TTL = %v", ttl)
	assert.Equal(t, true, ttl["Enabled"], "TTL = %v", ttl)
}

// TestContributorInsightsAndWarmThroughput: both reach the table's replica
// as TableV2 writes them; without them the template has neither.
func TestContributorInsightsAndWarmThroughput(t *testing.T) {
	app := cdktest.NewApp(t)
	stack := awscdk.NewStack(app, jsii.String("With"), nil)
	_, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Stg, Overrides: table.Overrides{
		ContributorInsights: ptr(table.ThrottledKeys),
		Billing:             &table.Billing{Mode: table.OnDemand, MaxReadRequestUnits: 15000},
		WarmThroughput:      &table.WarmThroughput{ReadUnitsPerSecond: 15000},
	}})
	require.NoError(t, err)
	plainStack := awscdk.NewStack(app, jsii.String("Without"), nil)
	_, err = table.New(plainStack, "Orders", validSpec(), table.Props{Stage: table.Stg})
	require.NoError(t, err)
	with := only(t, cdktest.JSON(t, stack), "AWS::DynamoDB::GlobalTable")
	replica := with["Replicas"].([]any)[0].(map[string]any)
	assert.Equal(t, "map[Enabled:true Mode:THROTTLED_KEYS]", fmt.Sprint(replica["ContributorInsightsSpecification"]), "ContributorInsightsSpecification")
	assert.Equal(t, "map[ReadUnitsPerSecond:15000]", fmt.Sprint(with["WarmThroughput"]), "WarmThroughput")
	without := only(t, cdktest.JSON(t, plainStack), "AWS::DynamoDB::GlobalTable")
	plain := without["Replicas"].([]any)[0].(map[string]any)
	assert.Nil(t, plain["ContributorInsightsSpecification"], "a table without the settings has ContributorInsightsSpecification")
	assert.Nil(t, without["WarmThroughput"], "a table without the settings has WarmThroughput")
}

// TestResourceAccess: the resource-based policy names the principal, its
// item actions on the table and Query on its indexes, by ARNs built from the
// table's name (a reference to the table itself would be circular).
func TestResourceAccess(t *testing.T) {
	stack := awscdk.NewStack(cdktest.NewApp(t), jsii.String("Test"), nil)
	_, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Prod, Overrides: table.Overrides{ResourceAccess: []table.Access{
		{Principal: "arn:aws:iam::210987654321:role/reporting", Actions: []string{"dynamodb:Query", "dynamodb:GetItem"}, Indexes: []string{"GSI1"}},
	}}})
	require.NoError(t, err)
	replica := only(t, cdktest.JSON(t, stack), "AWS::DynamoDB::GlobalTable")["Replicas"].([]any)[0].(map[string]any)
	doc, err := json.Marshal(replica["ResourcePolicy"])
	require.NoError(t, err)
	for _, want := range []string{
		`"Action":["dynamodb:GetItem","dynamodb:Query"],"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::210987654321:role/reporting"},"Resource":{"Fn::Sub":"arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/orders-prod"}`,
		`"Action":"dynamodb:Query","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::210987654321:role/reporting"},"Resource":{"Fn::Sub":"arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/orders-prod/index/GSI1"}`,
	} {
		assert.Contains(t, string(doc), want, "resource policy")
	}
}

func TestCustomerKeyNeedsRegion(t *testing.T) {
	stack := cdktest.NewStack(t)
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	_, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Dev, Overrides: table.Overrides{Encryption: ptr(table.CustomerManaged), EncryptionKey: key}})
	assert.ErrorContains(t, err, "set Region for stage dev in infra/config", "New(CMK, no region)")
	_, err = table.New(stack, "Orders2", validSpec(), table.Props{Stage: table.Dev, Overrides: table.Overrides{EncryptionKey: key}})
	assert.ErrorContains(t, err, "EncryptionKey is set with Encryption=AWS_OWNED", "New(key, AWS owned)")
}

func TestNewBilling(t *testing.T) {
	stack := cdktest.NewStack(t)
	mustNewWith(t, stack, "Capped", table.Overrides{Billing: &table.Billing{Mode: table.OnDemand, MaxReadRequestUnits: 100, MaxWriteRequestUnits: 50}})
	mustNewWith(t, stack, "Provisioned", table.Overrides{Billing: &table.Billing{Mode: table.Provisioned, ReadCapacity: 5, WriteCapacity: 20}})
	tmpl := cdktest.JSON(t, stack)
	got := map[string]string{}
	for _, r := range tmpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] != "AWS::DynamoDB::GlobalTable" {
			continue
		}
		p := r["Properties"].(map[string]any)
		var indexCaps []any
		for _, ix := range p["GlobalSecondaryIndexes"].([]any) {
			indexCaps = append(indexCaps, ix.(map[string]any)["WriteOnDemandThroughputSettings"])
		}
		b, _ := json.Marshal([]any{p["BillingMode"], p["WriteOnDemandThroughputSettings"], p["WriteProvisionedThroughputSettings"], indexCaps})
		got[p["TableName"].(string)] = string(b)
	}
	// The index is capped like the table: its throughput is its own.
	assert.Contains(t, got["capped"], `"PAY_PER_REQUEST",{"MaxWriteRequestUnits":50},null,[{"MaxWriteRequestUnits":50}]`, "capped table")
	assert.Contains(t, got["provisioned"], `"PROVISIONED",null,{"WriteCapacityAutoScalingSettings":{"MaxCapacity":20,"MinCapacity":1`, "provisioned table")
}

func mustNewWith(t *testing.T, stack awscdk.Stack, name string, o table.Overrides) {
	t.Helper()
	_, err := table.New(stack, name, validSpec(), table.Props{Stage: table.Dev, TableName: strings.ToLower(name), Overrides: o})
	require.NoError(t, err)
}

func TestNewTableNameOverride(t *testing.T) {
	stack := cdktest.NewStack(t)
	_, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Prod, TableName: "legacy-orders"})
	require.NoError(t, err)
	assert.Equal(t, "legacy-orders", only(t, cdktest.JSON(t, stack), "AWS::DynamoDB::GlobalTable")["TableName"], "TableName")
	_, err = table.New(stack, "Bad", validSpec(), table.Props{Stage: table.Prod, TableName: "a b"})
	assert.ErrorContains(t, err, `table name "a b" has characters DynamoDB rejects`, "New(TableName=%q)", "a b")
}

// A rejected table must leave nothing behind: a half-built construct would
// still synthesize.
func TestNewRejectsWithoutSideEffects(t *testing.T) {
	spec := validSpec()
	spec.TTLAttribute = "pk"
	stack := cdktest.NewStack(t)
	_, err := table.New(stack, "Orders", spec, table.Props{Stage: table.Prod, Overrides: table.Overrides{RemovalPolicy: ptr(awscdk.RemovalPolicy_DESTROY)}})
	var ve *table.ValidationError
	require.ErrorAs(t, err, &ve, "New(): want a *ValidationError")
	assert.Equal(t, "Test/Orders", ve.Construct, "Construct: want the construct path")
	assert.ErrorContains(t, err, "Test/Orders", "error does not name the construct")
	assert.Zero(t, count(cdktest.JSON(t, stack), "AWS::DynamoDB::GlobalTable"), "tables synthesized after a rejected New")
	// Policy errors are reported even when the spec is valid.
	_, err = table.New(stack, "Orders2", validSpec(), table.Props{Stage: table.Prod, Overrides: table.Overrides{RemovalPolicy: ptr(awscdk.RemovalPolicy_DESTROY)}})
	assert.ErrorContains(t, err, "RemovalPolicy=DESTROY in prod", "New(prod, DESTROY)")
}

// statements returns the IAM statements attached to the role's policy.
func statements(t *testing.T, tmpl map[string]any) []map[string]any {
	t.Helper()
	doc := only(t, tmpl, "AWS::IAM::Policy")["PolicyDocument"].(map[string]any)
	var out []map[string]any
	for _, s := range doc["Statement"].([]any) {
		out = append(out, s.(map[string]any))
	}
	return out
}

func strs(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			b, _ := json.Marshal(x)
			out = append(out, strings.Trim(string(b), `"`))
		}
		return out
	}
	return nil
}

func newRole(stack awscdk.Stack) awsiam.Role {
	return awsiam.NewRole(stack, jsii.String("Fn"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
}

func TestGrantsAreScopedByIntent(t *testing.T) {
	tests := []struct {
		name    string
		grant   func(*table.Table, awsiam.IGrantable)
		actions []string
		index   bool // whether the index ARN is a resource
	}{
		{"read", func(tb *table.Table, g awsiam.IGrantable) { tb.GrantRead(g) }, table.ReadActions, true},
		{"write", func(tb *table.Table, g awsiam.IGrantable) { tb.GrantWrite(g) }, table.WriteActions, false},
		{"read-write", func(tb *table.Table, g awsiam.IGrantable) { tb.GrantReadWrite(g) },
			[]string{"dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack := cdktest.NewStack(t)
			tb, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Dev})
			require.NoError(t, err)
			tt.grant(tb, newRole(stack))
			st := statements(t, cdktest.JSON(t, stack))
			require.Len(t, st, 1, "statements")
			actions := strs(st[0]["Action"])
			slices.Sort(actions)
			want := slices.Clone(tt.actions)
			slices.Sort(want)
			assert.Equal(t, want, actions, "actions")
			for _, a := range actions {
				assert.NotContains(t, a, "*", "wildcard action")
			}
			res := strings.Join(strs(st[0]["Resource"]), " ")
			assert.NotContains(t, res, "index/*", "grants name each index")
			assert.Equal(t, tt.index, strings.Contains(res, "/index/GSI1"), "index ARN in resources: %s", res)
		})
	}
}

func TestGrantStreamRead(t *testing.T) {
	stack := cdktest.NewStack(t)
	plain, err := table.New(stack, "Plain", validSpec(), table.Props{Stage: table.Dev})
	require.NoError(t, err)
	role := newRole(stack)
	_, err = plain.GrantStreamRead(role)
	assert.ErrorContains(t, err, "has no stream", "GrantStreamRead without stream")
	spec := validSpec()
	spec.BaseName = "events"
	spec.Stream = table.OldImage
	streamed, err := table.New(stack, "Streamed", spec, table.Props{Stage: table.Dev})
	require.NoError(t, err)
	_, err = streamed.GrantStreamRead(role)
	require.NoError(t, err)
	st := statements(t, cdktest.JSON(t, stack))
	require.Len(t, st, 2, "want ListStreams and the stream reads")
	assert.Equal(t, []string{table.ListStreamsAction}, strs(st[0]["Action"]), "first statement: want ListStreams on * (no resource-level permission exists)")
	assert.Equal(t, "*", st[0]["Resource"], "first statement: want ListStreams on * (no resource-level permission exists)")
	assert.Equal(t, table.StreamReadActions, strs(st[1]["Action"]), "second statement actions")
	assert.Contains(t, fmt.Sprint(st[1]["Resource"]), "StreamArn", "stream grant resource is not the table's stream ARN")
}

func TestImport(t *testing.T) {
	stack := cdktest.NewStack(t)
	tb, err := table.Import(stack, "Orders", validSpec(), table.Prod, table.ImportOptions{})
	require.NoError(t, err)
	tb.GrantRead(newRole(stack))
	tmpl := cdktest.JSON(t, stack)
	assert.Zero(t, count(tmpl, "AWS::DynamoDB::GlobalTable"), "Import created tables")
	res, _ := json.Marshal(statements(t, tmpl)[0]["Resource"])
	for _, want := range []string{":table/orders-prod", ":table/orders-prod/index/GSI1"} {
		assert.Contains(t, string(res), want, "imported grant resources")
	}
	_, err = tb.GrantStreamRead(newRoleNamed(stack, "Consumer"))
	assert.Error(t, err, "GrantStreamRead on an import without StreamArn succeeded")
	_, err = table.Import(stack, "Bad", validSpec(), "qa", table.ImportOptions{})
	assert.ErrorContains(t, err, `stage "qa"`, "Import(stage qa)")
}

func newRoleNamed(stack awscdk.Stack, id string) awsiam.Role {
	return awsiam.NewRole(stack, jsii.String(id), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
}

func TestEnvironment(t *testing.T) {
	stack := cdktest.NewStack(t)
	tb, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Dev})
	require.NoError(t, err)
	env := tb.Environment("ORDERS_TABLE")
	require.Len(t, env, 1, "Environment")
	require.NotNil(t, env["ORDERS_TABLE"], "Environment = %v", env)
	got, _ := stack.Resolve(env["ORDERS_TABLE"]).(map[string]any)["Ref"].(string)
	assert.True(t, strings.HasPrefix(got, "Orders"), "env value resolves to Ref %q, want the table", got)
}
