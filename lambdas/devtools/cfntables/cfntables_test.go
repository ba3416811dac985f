package cfntables_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestParseTables(t *testing.T) {
	tmpl, err := cfntables.Load("testdata/kitchen.template.json")
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.Stack != "kitchen" {
		t.Errorf("Stack = %q", tmpl.Stack)
	}
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 || tables[0].LogicalID != "EventsTableA1B2C3D4" || tables[1].LogicalID != "PlainTable12345678" {
		t.Fatalf("tables = %+v", tables)
	}
	ev, plain := tables[0], tables[1]
	if ev.Name != "events" || plain.Name != "" {
		t.Errorf("names %q %q", ev.Name, plain.Name)
	}
	if ev.TTL == nil || *ev.TTL.AttributeName != "expires_at" || plain.TTL != nil {
		t.Errorf("TTL %+v %+v", ev.TTL, plain.TTL)
	}
	if s := ev.Input.StreamSpecification; s == nil || s.StreamViewType != types.StreamViewTypeNewAndOldImages {
		t.Errorf("stream %+v", s)
	}
	if got := (cfntables.Options{Prefix: "p-", Suffix: "-s"}).TableName(plain); got != "p-PlainTable12345678-s" {
		t.Errorf("generated name = %q", got)
	}
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
			if err != nil {
				t.Fatal(err)
			}
			_, err = tmpl.Tables()
			if err == nil || errors.Is(err, cfntables.ErrUnsupported) != tt.unsupported {
				t.Errorf("Tables() error = %v, unsupported want %v", err, tt.unsupported)
			}
		})
	}
	if _, err := cfntables.Parse([]byte(`not json`)); err == nil {
		t.Error("Parse accepted garbage")
	}
}

func TestFunctions(t *testing.T) {
	tmpl, err := cfntables.Load("testdata/kitchen.template.json")
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range fns {
		ids = append(ids, f.LogicalID)
	}
	if fmt.Sprint(ids) != "[GetAttFn NoEnvFn WorkerFn]" {
		t.Fatalf("functions = %v", ids)
	}
	names := map[string]string{"EventsTableA1B2C3D4": "events-x", "PlainTable12345678": "plain-x"}
	worker := fns[2]
	if fns[1].Timeout != 3*time.Second {
		t.Errorf("a function without Timeout: %v, want Lambda's default 3s", fns[1].Timeout)
	}
	if worker.Service() != "demo" {
		t.Errorf("Service = %q", worker.Service())
	}
	env, err := worker.Environment(names)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"DYNASTACK_SERVICE": "demo", "EVENTS_TABLE": "events-x", "PLAIN_TABLE": "plain-x"}
	if fmt.Sprint(env) != fmt.Sprint(want) {
		t.Errorf("env = %v, want %v", env, want)
	}
	if _, err := worker.Environment(map[string]string{}); !errors.Is(err, cfntables.ErrUnsupported) || !strings.Contains(err.Error(), "EVENTS_TABLE") {
		t.Errorf("unresolved Ref: %v", err)
	}
	if _, err := fns[0].Environment(names); !errors.Is(err, cfntables.ErrUnsupported) || !strings.Contains(err.Error(), "STREAM") {
		t.Errorf("GetAtt: %v", err)
	}
	if env, err := fns[1].Environment(names); err != nil || len(env) != 0 || fns[1].Service() != "" {
		t.Errorf("no env: %v %v", env, err)
	}
}

func TestLoadDir(t *testing.T) {
	tmpls, err := cfntables.LoadDir("testdata/dir")
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpls) != 2 || tmpls[0].Stack != "itsm" || tmpls[1].Stack != "other" {
		t.Errorf("templates = %d", len(tmpls))
	}
	if _, err := cfntables.LoadDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "cdk synth") {
		t.Errorf("empty dir: %v", err)
	}
}

// TestCreate builds the kitchen-sink tables in DynamoDB Local and reads
// them back with DescribeTable.
func TestCreate(t *testing.T) {
	client := testenv.Client(t)
	tmpl, err := cfntables.Load("testdata/kitchen.template.json")
	if err != nil {
		t.Fatal(err)
	}
	suffix := testenv.Suffix()
	ctx := context.Background()
	names, err := cfntables.Create(ctx, client, tmpl, cfntables.Options{Prefix: "pre-", Suffix: suffix})
	t.Cleanup(func() { cfntables.Delete(ctx, client, names) })
	if err != nil {
		t.Fatal(err)
	}
	if names["EventsTableA1B2C3D4"] != "pre-events"+suffix || names["PlainTable12345678"] != "pre-PlainTable12345678"+suffix {
		t.Fatalf("names = %v", names)
	}
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(names["EventsTableA1B2C3D4"])})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	if len(d.KeySchema) != 2 || *d.KeySchema[1].AttributeName != "sk" || d.KeySchema[1].KeyType != types.KeyTypeRange {
		t.Errorf("key schema %+v", d.KeySchema)
	}
	gsis := map[string]types.GlobalSecondaryIndexDescription{}
	for _, g := range d.GlobalSecondaryIndexes {
		gsis[*g.IndexName] = g
	}
	if g := gsis["ByType"]; g.Projection == nil || g.Projection.ProjectionType != types.ProjectionTypeInclude ||
		!slices.Equal(g.Projection.NonKeyAttributes, []string{"title", "owner"}) || *g.KeySchema[1].AttributeName != "gsi1sk" {
		t.Errorf("ByType = %+v", g)
	}
	if g := gsis["KeysOnly"]; g.Projection == nil || g.Projection.ProjectionType != types.ProjectionTypeKeysOnly {
		t.Errorf("KeysOnly = %+v", g)
	}
	if len(d.LocalSecondaryIndexes) != 1 || *d.LocalSecondaryIndexes[0].IndexName != "ByLsi" {
		t.Errorf("LSIs %+v", d.LocalSecondaryIndexes)
	}
	if d.StreamSpecification == nil || !*d.StreamSpecification.StreamEnabled || d.LatestStreamArn == nil {
		t.Errorf("stream %+v", d.StreamSpecification)
	}
	ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(names["EventsTableA1B2C3D4"])})
	if err != nil {
		t.Fatal(err)
	}
	if ttl.TimeToLiveDescription.TimeToLiveStatus != types.TimeToLiveStatusEnabled || *ttl.TimeToLiveDescription.AttributeName != "expires_at" {
		t.Errorf("TTL %+v", ttl.TimeToLiveDescription)
	}

	// Creating again fails, unless existing tables are kept.
	if _, err := cfntables.Create(ctx, client, tmpl, cfntables.Options{Prefix: "pre-", Suffix: suffix}); err == nil {
		t.Error("second Create succeeded")
	}
	if _, err := cfntables.Create(ctx, client, tmpl, cfntables.Options{Prefix: "pre-", Suffix: suffix, KeepExisting: true}); err != nil {
		t.Errorf("KeepExisting: %v", err)
	}
}

// TestStackTemplate checks that the ITSM template (golden snapshot when it
// exists) has what the service relies on.
func TestStackTemplate(t *testing.T) {
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", "itsm"))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := tmpl.Tables()
	if err != nil || len(tables) != 1 {
		t.Fatalf("tables %v %v", tables, err)
	}
	tbl := tables[0]
	if tbl.Name != "poc-itsm-tickets-dev" {
		t.Errorf("table name %q", tbl.Name)
	}
	if len(tbl.Input.GlobalSecondaryIndexes) != 1 || *tbl.Input.GlobalSecondaryIndexes[0].IndexName != "CallerIdIndex" {
		t.Errorf("GSIs %+v", tbl.Input.GlobalSecondaryIndexes)
	}
	fns, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	var svc []cfntables.Function
	for _, f := range fns {
		if f.Service() == "itsm" {
			svc = append(svc, f)
		}
	}
	if len(svc) != 1 || svc[0].Env["ITSM_TICKETS_TABLE"].Ref != tbl.LogicalID {
		t.Errorf("itsm function env does not Ref the table: %+v", svc)
	}
	// The local runner enforces the template's timeout on each invocation.
	if len(svc) == 1 && svc[0].Timeout != 10*time.Second {
		t.Errorf("itsm function timeout %v, want the template's 10s", svc[0].Timeout)
	}
}

// The dev Stak template's end-user routes are behind one JWT authorizer
// with the stage's issuer and audience; the local runner reads them here.
func TestJWTAuthorizers(t *testing.T) {
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", "stak"))
	if err != nil {
		t.Fatal(err)
	}
	auths, err := tmpl.JWTAuthorizers()
	if err != nil || len(auths) != 1 {
		t.Fatalf("JWTAuthorizers = %+v, %v; want one", auths, err)
	}
	a := auths[0]
	if a.Issuer != "https://auth.dev.stak.dynastack.example/" || len(a.Audience) != 1 || a.Audience[0] != "stak-dev" || len(a.Routes) != 4 {
		t.Errorf("authorizer %+v", a)
	}
	other, err := cfntables.Load(testenv.Template(t, "dev", "itsm"))
	if err != nil {
		t.Fatal(err)
	}
	if auths, err := other.JWTAuthorizers(); err != nil || len(auths) != 0 {
		t.Errorf("itsm: %+v %v, want none", auths, err)
	}
}
