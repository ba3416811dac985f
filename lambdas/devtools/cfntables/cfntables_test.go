package cfntables_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	agenticpmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestParseTables(t *testing.T) {
	tmpl, err := cfntables.Load("testdata/kitchen.template.json")
	require.NoError(t, err)
	assert.Equal(t, "kitchen", tmpl.Stack, "Stack")
	tables, err := tmpl.Tables()
	require.NoError(t, err)
	require.Len(t, tables, 2, "tables")
	require.Equal(t, "EventsTableA1B2C3D4", tables[0].LogicalID, "first table")
	require.Equal(t, "PlainTable12345678", tables[1].LogicalID, "second table")
	ev, plain := tables[0], tables[1]
	assert.Equal(t, "events", ev.Name, "name of the events table")
	assert.Empty(t, plain.Name, "name of the plain table")
	if assert.NotNil(t, ev.TTL, "TTL of the events table") {
		assert.Equal(t, "expires_at", *ev.TTL.AttributeName, "TTL attribute")
	}
	assert.Nil(t, plain.TTL, "TTL of the plain table")
	if s := ev.Input.StreamSpecification; assert.NotNil(t, s, "stream") {
		assert.Equal(t, types.StreamViewTypeNewAndOldImages, s.StreamViewType, "stream view")
	}
	assert.Equal(t, "p-PlainTable12345678-s", (cfntables.Options{Prefix: "p-", Suffix: "-s"}).TableName(plain), "generated name")
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, json  string
		unsupported bool
	}{
		{"intrinsic table name", `{"Resources":{"T":{"Type":"AWS::DynamoDB::Table","Properties":{"TableName":{"Fn::Join":["",["a","b"]]},"KeySchema":[{"AttributeName":"id","KeyType":"HASH"}]}}}}`, true},
		{"no key schema", `{"Resources":{"T":{"Type":"AWS::DynamoDB::GlobalTable","Properties":{"TableName":"x"}}}}`, false},
		{"bad properties", `{"Resources":{"T":{"Type":"AWS::DynamoDB::Table","Properties":{"KeySchema":"nope"}}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := cfntables.Parse([]byte(tt.json))
			require.NoError(t, err)
			_, err = tmpl.Tables()
			require.Error(t, err, "Tables()")
			assert.Equal(t, tt.unsupported, errors.Is(err, cfntables.ErrUnsupported), "Tables() error %v is ErrUnsupported", err)
		})
	}
	_, err := cfntables.Parse([]byte(`not json`))
	assert.Error(t, err, "Parse accepted garbage")
}

func TestFunctions(t *testing.T) {
	tmpl, err := cfntables.Load("testdata/kitchen.template.json")
	require.NoError(t, err)
	fns, err := tmpl.Functions()
	require.NoError(t, err)
	var ids []string
	for _, f := range fns {
		ids = append(ids, f.LogicalID)
	}
	require.Equal(t, []string{"GetAttFn", "NoEnvFn", "WorkerFn"}, ids, "functions")
	names := map[string]string{"EventsTableA1B2C3D4": "events-x", "PlainTable12345678": "plain-x"}
	worker := fns[2]
	assert.Equal(t, 3*time.Second, fns[1].Timeout, "a function without Timeout: want Lambda's default 3s")
	assert.Equal(t, "demo", worker.Service(), "Service")
	env, err := worker.Environment(names)
	require.NoError(t, err)
	want := map[string]string{"DYNASTACK_SERVICE": "demo", "EVENTS_TABLE": "events-x", "PLAIN_TABLE": "plain-x"}
	assert.Equal(t, want, env, "env")
	_, err = worker.Environment(map[string]string{})
	assert.ErrorIs(t, err, cfntables.ErrUnsupported, "unresolved Ref")
	assert.ErrorContains(t, err, "EVENTS_TABLE", "unresolved Ref")
	_, err = fns[0].Environment(names)
	assert.ErrorIs(t, err, cfntables.ErrUnsupported, "GetAtt")
	assert.ErrorContains(t, err, "STREAM", "GetAtt")
	env, err = fns[1].Environment(names)
	assert.NoError(t, err, "no env")
	assert.Empty(t, env, "no env")
	assert.Empty(t, fns[1].Service(), "no env: Service")
}

func TestLoadDir(t *testing.T) {
	tmpls, err := cfntables.LoadDir("testdata/dir")
	require.NoError(t, err)
	var stacks []string
	for _, tmpl := range tmpls {
		stacks = append(stacks, tmpl.Stack)
	}
	assert.Equal(t, []string{"itsm", "other"}, stacks, "templates")
	_, err = cfntables.LoadDir(t.TempDir())
	assert.ErrorContains(t, err, "cdk synth", "empty dir")
}

// TestCreate builds the kitchen-sink tables in DynamoDB Local and reads
// them back with DescribeTable.
func TestCreate(t *testing.T) {
	client := testenv.Client(t)
	tmpl, err := cfntables.Load("testdata/kitchen.template.json")
	require.NoError(t, err)
	suffix := testenv.Suffix()
	ctx := context.Background()
	names, err := cfntables.Create(ctx, client, tmpl, cfntables.Options{Prefix: "pre-", Suffix: suffix})
	t.Cleanup(func() { cfntables.Delete(ctx, client, names) })
	require.NoError(t, err)
	require.Equal(t, "pre-events"+suffix, names["EventsTableA1B2C3D4"], "name of the events table; names %v", names)
	require.Equal(t, "pre-PlainTable12345678"+suffix, names["PlainTable12345678"], "name of the plain table; names %v", names)
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(names["EventsTableA1B2C3D4"])})
	require.NoError(t, err)
	d := out.Table
	if assert.Len(t, d.KeySchema, 2, "key schema") {
		assert.Equal(t, "sk", *d.KeySchema[1].AttributeName, "sort key")
		assert.Equal(t, types.KeyTypeRange, d.KeySchema[1].KeyType, "sort key type")
	}
	gsis := map[string]types.GlobalSecondaryIndexDescription{}
	for _, g := range d.GlobalSecondaryIndexes {
		gsis[*g.IndexName] = g
	}
	if g := gsis["ByType"]; assert.NotNil(t, g.Projection, "ByType projection") {
		assert.Equal(t, types.ProjectionTypeInclude, g.Projection.ProjectionType, "ByType projection type")
		assert.Equal(t, []string{"title", "owner"}, g.Projection.NonKeyAttributes, "ByType projected attributes")
		if assert.Len(t, g.KeySchema, 2, "ByType key schema") {
			assert.Equal(t, "gsi1sk", *g.KeySchema[1].AttributeName, "ByType sort key")
		}
	}
	if g := gsis["KeysOnly"]; assert.NotNil(t, g.Projection, "KeysOnly projection") {
		assert.Equal(t, types.ProjectionTypeKeysOnly, g.Projection.ProjectionType, "KeysOnly projection type")
	}
	if assert.Len(t, d.LocalSecondaryIndexes, 1, "LSIs") {
		assert.Equal(t, "ByLsi", *d.LocalSecondaryIndexes[0].IndexName, "LSI")
	}
	if assert.NotNil(t, d.StreamSpecification, "stream") {
		assert.True(t, *d.StreamSpecification.StreamEnabled, "stream enabled")
	}
	assert.NotNil(t, d.LatestStreamArn, "stream ARN")
	ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(names["EventsTableA1B2C3D4"])})
	require.NoError(t, err)
	assert.Equal(t, types.TimeToLiveStatusEnabled, ttl.TimeToLiveDescription.TimeToLiveStatus, "TTL status")
	assert.Equal(t, "expires_at", aws.ToString(ttl.TimeToLiveDescription.AttributeName), "TTL attribute")

	// Creating again fails, unless existing tables are kept.
	_, err = cfntables.Create(ctx, client, tmpl, cfntables.Options{Prefix: "pre-", Suffix: suffix})
	assert.Error(t, err, "second Create succeeded")
	_, err = cfntables.Create(ctx, client, tmpl, cfntables.Options{Prefix: "pre-", Suffix: suffix, KeepExisting: true})
	assert.NoError(t, err, "KeepExisting")
}

// TestStackTemplate checks that the ITSM template (golden snapshot when it
// exists) has what the service relies on.
func TestStackTemplate(t *testing.T) {
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", "itsm"))
	require.NoError(t, err)
	tables, err := tmpl.Tables()
	require.NoError(t, err)
	require.Len(t, tables, 1, "tables")
	tbl := tables[0]
	assert.Equal(t, "poc-itsm-tickets-dev", tbl.Name, "table name")
	if assert.Len(t, tbl.Input.GlobalSecondaryIndexes, 1, "GSIs") {
		assert.Equal(t, "CallerIdIndex", *tbl.Input.GlobalSecondaryIndexes[0].IndexName, "GSI")
	}
	fns, err := tmpl.Functions()
	require.NoError(t, err)
	var svc []cfntables.Function
	for _, f := range fns {
		if f.Service() == "itsm" {
			svc = append(svc, f)
		}
	}
	if assert.Len(t, svc, 1, "itsm functions") {
		assert.Equal(t, tbl.LogicalID, svc[0].Env["ITSM_TICKETS_TABLE"].Ref, "itsm function env does not Ref the table")
		// The local runner enforces the template's timeout on each invocation.
		assert.Equal(t, 10*time.Second, svc[0].Timeout, "itsm function timeout: want the template's")
	}
}

// The dev Stak template's end-user routes are behind one JWT authorizer
// with the stage's issuer and audience; the local runner reads them here.
func TestJWTAuthorizers(t *testing.T) {
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", "stak"))
	require.NoError(t, err)
	auths, err := tmpl.JWTAuthorizers()
	require.NoError(t, err)
	require.Len(t, auths, 1, "JWTAuthorizers")
	a := auths[0]
	assert.Equal(t, "https://auth.dev.stak.dynastack.example/", a.Issuer, "issuer")
	assert.Equal(t, []string{"stak-dev"}, a.Audience, "audience")
	assert.Len(t, a.Routes, 4, "routes")
	other, err := cfntables.Load(testenv.Template(t, "dev", "itsm"))
	require.NoError(t, err)
	auths, err = other.JWTAuthorizers()
	assert.NoError(t, err, "itsm")
	assert.Empty(t, auths, "itsm: want none")
}

// Routes follows each route to the function its integration invokes: in
// AgenticPM's template (three functions behind one API, decision 22 of its
// doc page) every route goes to the function whose contract lists it.
func TestRoutes(t *testing.T) {
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", agenticpmcontract.Name))
	require.NoError(t, err)
	routes, err := tmpl.Routes()
	require.NoError(t, err)
	fns, err := tmpl.Functions()
	require.NoError(t, err)
	name := map[string]string{} // logical id → function name
	for _, f := range fns {
		name[f.LogicalID] = f.Service()
	}
	got := map[string]string{}
	for _, r := range routes {
		got[r.Key] = name[r.Function]
		assert.Equal(t, "AWS_IAM", r.Auth, "%s: AgenticPM's routes are IAM-authorized", r.Key)
	}
	want := map[string]string{}
	for _, f := range agenticpmcontract.Service.HTTPFunctions() {
		for _, r := range f.Routes {
			want[r.Key()] = f.Name
		}
	}
	assert.Equal(t, want, got, "route → function")
	assert.Len(t, slices.Compact(slices.Sorted(maps.Values(got))), 3, "functions behind the API")
}

// A CreateTable whose answer is lost (as on a loaded machine, where
// DynamoDB Local answers after the SDK gave up) is retried by the SDK and
// finds the table its first attempt made: Create succeeds, as it did. A
// table that was there before is still an error without KeepExisting.
func TestCreateWithALostAnswer(t *testing.T) {
	client, proxy := servicetest.FaultyClient(t, "")
	tmpl, err := cfntables.Load("testdata/kitchen.template.json")
	require.NoError(t, err)
	suffix := testenv.Suffix()
	ctx := context.Background()
	proxy.NextOn("CreateTable", ddbfault.DropAnswer, 1)
	names, err := cfntables.Create(ctx, client, tmpl, cfntables.Options{Suffix: suffix})
	t.Cleanup(func() { cfntables.Delete(ctx, testenv.Client(t), names) })
	require.NoError(t, err, "create with the first answer lost")
	assert.Len(t, names, 2, "tables created")
	_, err = cfntables.Create(ctx, client, tmpl, cfntables.Options{Suffix: suffix})
	var inUse *types.ResourceInUseException
	assert.ErrorAs(t, err, &inUse, "create again: the tables were there before")
}

// TestFunctionOf follows every way an invoker names its function to the
// function: itself (Ref, Fn::GetAtt Arn), its live alias, a version.
func TestFunctionOf(t *testing.T) {
	tmpl, err := cfntables.Parse([]byte(`{"Resources":{
		"Fn":{"Type":"AWS::Lambda::Function","Properties":{}},
		"FnVersion":{"Type":"AWS::Lambda::Version","Properties":{"FunctionName":{"Ref":"Fn"}}},
		"FnLive":{"Type":"AWS::Lambda::Alias","Properties":{"Name":"live","FunctionName":{"Ref":"Fn"},"FunctionVersion":{"Fn::GetAtt":["FnVersion","Version"]}}},
		"Q":{"Type":"AWS::SQS::Queue","Properties":{}},
		"Loop":{"Type":"AWS::Lambda::Alias","Properties":{"FunctionName":{"Ref":"Loop"}}},
		"M":{"Type":"AWS::Lambda::EventSourceMapping","Properties":{"FunctionName":{"Fn::Join":["",[{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"FnLive"}]}]},":live"]]},"EventSourceArn":{"Fn::GetAtt":["Q","Arn"]}}},
		"S":{"Type":"AWS::Scheduler::Schedule","Properties":{"ScheduleExpression":"rate(1 hour)","Target":{"Arn":{"Ref":"FnLive"},"Input":"{}"}}}
	}}`))
	require.NoError(t, err)
	for name, raw := range map[string]string{
		"Ref":        `{"Ref":"Fn"}`,
		"GetAtt Arn": `{"Fn::GetAtt":["Fn","Arn"]}`,
		"alias":      `{"Ref":"FnLive"}`,
		"version":    `{"Ref":"FnVersion"}`,
		"qualified":  `{"Fn::Join":["",[{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"FnLive"}]}]},":live"]]}`,
	} {
		fn, ok := tmpl.FunctionOf([]byte(raw))
		assert.True(t, ok, name)
		assert.Equal(t, "Fn", fn, name)
	}
	for name, raw := range map[string]string{
		"a queue":      `{"Fn::GetAtt":["Q","Arn"]}`,
		"unknown":      `{"Ref":"Nope"}`,
		"another attr": `{"Fn::GetAtt":["Fn","SnapStartResponse"]}`,
		"a literal":    `"arn:aws:lambda:us-east-1:1:function:x"`,
		"a loop":       `{"Ref":"Loop"}`,
	} {
		_, ok := tmpl.FunctionOf([]byte(raw))
		assert.False(t, ok, name)
	}
	maps, err := tmpl.QueueMappings()
	require.NoError(t, err)
	require.Len(t, maps, 1)
	assert.Equal(t, "Fn", maps[0].Function, "a mapping of the alias is the function's")
	scheds, err := tmpl.Schedules()
	require.NoError(t, err)
	require.Len(t, scheds, 1)
	assert.Equal(t, "Fn", scheds[0].Function, "a schedule of the alias is the function's")
}
