package table_test

import (
	"encoding/json"
	"errors"
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
	if len(found) != 1 {
		t.Fatalf("%d resources of type %s, want 1", len(found), cfnType)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	p := only(t, cdktest.JSON(t, stack), "AWS::DynamoDB::GlobalTable")
	if p["TableName"] != "orders-dev" {
		t.Errorf("TableName = %v, want orders-dev", p["TableName"])
	}
	if s := p["StreamSpecification"].(map[string]any); s["StreamViewType"] != "NEW_IMAGE" {
		t.Errorf("stream = %v", s)
	}
	if sse := p["SSESpecification"].(map[string]any); sse["SSEEnabled"] != true || sse["SSEType"] != "KMS" {
		t.Errorf("SSESpecification = %v, want KMS", sse)
	}
	replica := p["Replicas"].([]any)[0].(map[string]any)
	pitr := replica["PointInTimeRecoverySpecification"].(map[string]any)
	if pitr["PointInTimeRecoveryEnabled"] != true || pitr["RecoveryPeriodInDays"] != float64(35) {
		t.Errorf("PITR = %v, want on for 35 days", pitr)
	}
	tags := fmt.Sprint(replica["Tags"])
	for _, want := range []string{"Key:service Value:orders", "Key:stage Value:dev", "Key:team Value:payments"} {
		if !strings.Contains(tags, want) {
			t.Errorf("tags %s lack %s", tags, want)
		}
	}
	if ttl := p["TimeToLiveSpecification"].(map[string]any); ttl["AttributeName"] != "expires_at" || ttl["Enabled"] != true {
		t.Errorf("TTL = %v", ttl)
	}
}

// TestContributorInsightsAndWarmThroughput: both reach the table's replica
// as TableV2 writes them; without them the template has neither.
func TestContributorInsightsAndWarmThroughput(t *testing.T) {
	app := cdktest.NewApp(t)
	stack := awscdk.NewStack(app, jsii.String("With"), nil)
	if _, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Stg, Overrides: table.Overrides{
		ContributorInsights: ptr(table.ThrottledKeys),
		Billing:             &table.Billing{Mode: table.OnDemand, MaxReadRequestUnits: 15000},
		WarmThroughput:      &table.WarmThroughput{ReadUnitsPerSecond: 15000},
	}}); err != nil {
		t.Fatal(err)
	}
	plainStack := awscdk.NewStack(app, jsii.String("Without"), nil)
	if _, err := table.New(plainStack, "Orders", validSpec(), table.Props{Stage: table.Stg}); err != nil {
		t.Fatal(err)
	}
	with := only(t, cdktest.JSON(t, stack), "AWS::DynamoDB::GlobalTable")
	replica := with["Replicas"].([]any)[0].(map[string]any)
	if ci := fmt.Sprint(replica["ContributorInsightsSpecification"]); ci != "map[Enabled:true Mode:THROTTLED_KEYS]" {
		t.Errorf("ContributorInsightsSpecification = %s", ci)
	}
	if w := fmt.Sprint(with["WarmThroughput"]); w != "map[ReadUnitsPerSecond:15000]" {
		t.Errorf("WarmThroughput = %s", w)
	}
	without := only(t, cdktest.JSON(t, plainStack), "AWS::DynamoDB::GlobalTable")
	plain := without["Replicas"].([]any)[0].(map[string]any)
	if plain["ContributorInsightsSpecification"] != nil || without["WarmThroughput"] != nil {
		t.Errorf("a table without the settings has them: %v, %v", plain["ContributorInsightsSpecification"], without["WarmThroughput"])
	}
}

// TestResourceAccess: the resource-based policy names the principal, its
// item actions on the table and Query on its indexes, by ARNs built from the
// table's name (a reference to the table itself would be circular).
func TestResourceAccess(t *testing.T) {
	stack := awscdk.NewStack(cdktest.NewApp(t), jsii.String("Test"), nil)
	if _, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Prod, Overrides: table.Overrides{ResourceAccess: []table.Access{
		{Principal: "arn:aws:iam::210987654321:role/reporting", Actions: []string{"dynamodb:Query", "dynamodb:GetItem"}, Indexes: []string{"GSI1"}},
	}}}); err != nil {
		t.Fatal(err)
	}
	replica := only(t, cdktest.JSON(t, stack), "AWS::DynamoDB::GlobalTable")["Replicas"].([]any)[0].(map[string]any)
	doc, err := json.Marshal(replica["ResourcePolicy"])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"Action":["dynamodb:GetItem","dynamodb:Query"],"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::210987654321:role/reporting"},"Resource":{"Fn::Sub":"arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/orders-prod"}`,
		`"Action":"dynamodb:Query","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::210987654321:role/reporting"},"Resource":{"Fn::Sub":"arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/orders-prod/index/GSI1"}`,
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("resource policy %s\nlacks %s", doc, want)
		}
	}
}

func TestCustomerKeyNeedsRegion(t *testing.T) {
	stack := cdktest.NewStack(t)
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	_, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Dev, Overrides: table.Overrides{Encryption: ptr(table.CustomerManaged), EncryptionKey: key}})
	if err == nil || !strings.Contains(err.Error(), "set Region for stage dev in infra/config") {
		t.Errorf("New(CMK, no region) = %v", err)
	}
	_, err = table.New(stack, "Orders2", validSpec(), table.Props{Stage: table.Dev, Overrides: table.Overrides{EncryptionKey: key}})
	if err == nil || !strings.Contains(err.Error(), "EncryptionKey is set with Encryption=AWS_OWNED") {
		t.Errorf("New(key, AWS owned) = %v", err)
	}
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
	if !strings.Contains(got["capped"], `"PAY_PER_REQUEST",{"MaxWriteRequestUnits":50},null,[{"MaxWriteRequestUnits":50}]`) {
		t.Errorf("capped table: %s", got["capped"])
	}
	if !strings.Contains(got["provisioned"], `"PROVISIONED",null,{"WriteCapacityAutoScalingSettings":{"MaxCapacity":20,"MinCapacity":1`) {
		t.Errorf("provisioned table: %s", got["provisioned"])
	}
}

func mustNewWith(t *testing.T, stack awscdk.Stack, name string, o table.Overrides) {
	t.Helper()
	if _, err := table.New(stack, name, validSpec(), table.Props{Stage: table.Dev, TableName: strings.ToLower(name), Overrides: o}); err != nil {
		t.Fatal(err)
	}
}

func TestNewTableNameOverride(t *testing.T) {
	stack := cdktest.NewStack(t)
	if _, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Prod, TableName: "legacy-orders"}); err != nil {
		t.Fatal(err)
	}
	if got := only(t, cdktest.JSON(t, stack), "AWS::DynamoDB::GlobalTable")["TableName"]; got != "legacy-orders" {
		t.Errorf("TableName = %v", got)
	}
	if _, err := table.New(stack, "Bad", validSpec(), table.Props{Stage: table.Prod, TableName: "a b"}); err == nil || !strings.Contains(err.Error(), `table name "a b" has characters DynamoDB rejects`) {
		t.Errorf("New(TableName=%q) = %v", "a b", err)
	}
}

// A rejected table must leave nothing behind: a half-built construct would
// still synthesize.
func TestNewRejectsWithoutSideEffects(t *testing.T) {
	spec := validSpec()
	spec.TTLAttribute = "pk"
	stack := cdktest.NewStack(t)
	_, err := table.New(stack, "Orders", spec, table.Props{Stage: table.Prod, Overrides: table.Overrides{RemovalPolicy: ptr(awscdk.RemovalPolicy_DESTROY)}})
	var ve *table.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("New() = %v, want a *ValidationError", err)
	}
	if ve.Construct != "Test/Orders" {
		t.Errorf("Construct = %q, want the construct path Test/Orders", ve.Construct)
	}
	if !strings.Contains(err.Error(), "Test/Orders") {
		t.Errorf("error %q does not name the construct", err)
	}
	if n := count(cdktest.JSON(t, stack), "AWS::DynamoDB::GlobalTable"); n != 0 {
		t.Errorf("%d tables synthesized after a rejected New", n)
	}
	// Policy errors are reported even when the spec is valid.
	_, err = table.New(stack, "Orders2", validSpec(), table.Props{Stage: table.Prod, Overrides: table.Overrides{RemovalPolicy: ptr(awscdk.RemovalPolicy_DESTROY)}})
	if err == nil || !strings.Contains(err.Error(), "RemovalPolicy=DESTROY in prod") {
		t.Errorf("New(prod, DESTROY) = %v", err)
	}
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
			if err != nil {
				t.Fatal(err)
			}
			tt.grant(tb, newRole(stack))
			st := statements(t, cdktest.JSON(t, stack))
			if len(st) != 1 {
				t.Fatalf("%d statements, want 1: %v", len(st), st)
			}
			actions := strs(st[0]["Action"])
			slices.Sort(actions)
			want := slices.Clone(tt.actions)
			slices.Sort(want)
			if !slices.Equal(actions, want) {
				t.Errorf("actions = %v, want %v", actions, want)
			}
			for _, a := range actions {
				if strings.Contains(a, "*") {
					t.Errorf("wildcard action %q", a)
				}
			}
			res := strings.Join(strs(st[0]["Resource"]), " ")
			if strings.Contains(res, "index/*") {
				t.Errorf("resources %s use index/*; grants name each index", res)
			}
			if got := strings.Contains(res, "/index/GSI1"); got != tt.index {
				t.Errorf("index ARN in resources = %v, want %v: %s", got, tt.index, res)
			}
		})
	}
}

func TestGrantStreamRead(t *testing.T) {
	stack := cdktest.NewStack(t)
	plain, err := table.New(stack, "Plain", validSpec(), table.Props{Stage: table.Dev})
	if err != nil {
		t.Fatal(err)
	}
	role := newRole(stack)
	if _, err := plain.GrantStreamRead(role); err == nil || !strings.Contains(err.Error(), "has no stream") {
		t.Errorf("GrantStreamRead without stream = %v, want an error", err)
	}
	spec := validSpec()
	spec.BaseName = "events"
	spec.Stream = table.OldImage
	streamed, err := table.New(stack, "Streamed", spec, table.Props{Stage: table.Dev})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := streamed.GrantStreamRead(role); err != nil {
		t.Fatal(err)
	}
	st := statements(t, cdktest.JSON(t, stack))
	if len(st) != 2 {
		t.Fatalf("statements = %v, want ListStreams and the stream reads", st)
	}
	if !slices.Equal(strs(st[0]["Action"]), []string{table.ListStreamsAction}) || st[0]["Resource"] != "*" {
		t.Errorf("first statement %v, want ListStreams on * (no resource-level permission exists)", st[0])
	}
	if !slices.Equal(strs(st[1]["Action"]), table.StreamReadActions) {
		t.Errorf("second statement actions %v, want %v", st[1]["Action"], table.StreamReadActions)
	}
	if res := fmt.Sprint(st[1]["Resource"]); !strings.Contains(res, "StreamArn") {
		t.Errorf("stream grant resource %s is not the table's stream ARN", res)
	}
}

func TestImport(t *testing.T) {
	stack := cdktest.NewStack(t)
	tb, err := table.Import(stack, "Orders", validSpec(), table.Prod, table.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tb.GrantRead(newRole(stack))
	tmpl := cdktest.JSON(t, stack)
	if n := count(tmpl, "AWS::DynamoDB::GlobalTable"); n != 0 {
		t.Errorf("Import created %d tables", n)
	}
	res, _ := json.Marshal(statements(t, tmpl)[0]["Resource"])
	for _, want := range []string{":table/orders-prod", ":table/orders-prod/index/GSI1"} {
		if !strings.Contains(string(res), want) {
			t.Errorf("imported grant resources %s lack %s", res, want)
		}
	}
	if _, err := tb.GrantStreamRead(newRoleNamed(stack, "Consumer")); err == nil {
		t.Error("GrantStreamRead on an import without StreamArn succeeded")
	}
	if _, err := table.Import(stack, "Bad", validSpec(), "qa", table.ImportOptions{}); err == nil || !strings.Contains(err.Error(), `stage "qa"`) {
		t.Errorf("Import(stage qa) = %v", err)
	}
}

func newRoleNamed(stack awscdk.Stack, id string) awsiam.Role {
	return awsiam.NewRole(stack, jsii.String(id), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
}

func TestEnvironment(t *testing.T) {
	stack := cdktest.NewStack(t)
	tb, err := table.New(stack, "Orders", validSpec(), table.Props{Stage: table.Dev})
	if err != nil {
		t.Fatal(err)
	}
	env := tb.Environment("ORDERS_TABLE")
	if len(env) != 1 || env["ORDERS_TABLE"] == nil {
		t.Fatalf("Environment = %v", env)
	}
	if got, _ := stack.Resolve(env["ORDERS_TABLE"]).(map[string]any)["Ref"].(string); !strings.HasPrefix(got, "Orders") {
		t.Errorf("env value resolves to Ref %q, want the table", got)
	}
}
