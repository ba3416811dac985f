package ddbrecord_test

import (
	"context"
	"github.com/dynastack/dynastack/constructs/service"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

func TestCallLog(t *testing.T) {
	ctx := context.Background()
	raw := testenv.Client(t)
	tbl := table(t, raw)
	dir := t.TempDir()
	// This test binary may itself be recording (make test): the test's
	// log takes over until it stops.
	stop, err := ddbrecord.StartCallLog(func(k string) string { return map[string]string{ddbrecord.EnvCallsDir: dir}[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	// A function's client, made the way its constructor makes it when
	// the dev side passes the recorder.
	getenv := testenv.Getenv(t, map[string]string{service.EnvFunction: "fn"})
	fn, err := ddb.NewClient(ctx, getenv, ddbrecord.ClientOptions(getenv)...)
	if err != nil {
		t.Fatal(err)
	}
	item := map[string]types.AttributeValue{"pk": s("1"), "g": s("x")}
	for range 3 { // logged once
		if _, err := fn.PutItem(ctx, &dynamodb.PutItemInput{TableName: &tbl, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fn.Query(ctx, &dynamodb.QueryInput{TableName: &tbl, IndexName: aws.String("byG"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("x")}}); err != nil {
		t.Fatal(err)
	}
	// A refused request is logged all the same.
	if _, err := fn.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("no-such-table"), Key: item}); err == nil {
		t.Fatal("delete from a missing table succeeded")
	}
	// A client of no function (a test's fixtures) is not logged.
	if opts := ddbrecord.ClientOptions(testenv.Getenv(t, nil)); len(opts) != 0 {
		t.Errorf("%d recording options for a client of no function", len(opts))
	}
	if _, err := testenv.Client(t).GetItem(ctx, &dynamodb.GetItemInput{TableName: &tbl, Key: map[string]types.AttributeValue{"pk": s("1")}}); err != nil {
		t.Fatal(err)
	}
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", "itsm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ddbrecord.LogTables(tmpl, map[string]string{"Tickets83B11BB2": "tickets-x"}); err != nil {
		t.Fatal(err)
	}

	// Read while the log is still open: a process killed now loses nothing.
	logs, err := ddbrecord.ReadCallLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	call := func(action, table, index string) ddbrecord.FunctionCall {
		return ddbrecord.FunctionCall{Function: "fn", Access: ddbrecord.Access{Action: "dynamodb:" + action, Table: table, Index: index}}
	}
	want := []ddbrecord.FunctionCall{call("PutItem", tbl, ""), call("Query", tbl, "byG"), call("DeleteItem", "no-such-table", "")}
	if logs.Files != 1 || !slices.Equal(logs.Calls, want) {
		t.Errorf("logged %d files, calls %v; want 1, %v", logs.Files, logs.Calls, want)
	}
	if got := logs.Tables["tickets-x"]; got != (ddbrecord.TableOrigin{LogicalID: "Tickets83B11BB2", TemplateName: "poc-itsm-tickets-dev"}) || len(logs.Tables) != 1 {
		t.Errorf("tables %v", logs.Tables)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := fn.GetItem(ctx, &dynamodb.GetItemInput{TableName: &tbl, Key: map[string]types.AttributeValue{"pk": s("1")}}); err == nil {
		t.Error("a call that could not be logged was sent")
	}
}

func TestNoCallLogWithoutTheVariable(t *testing.T) {
	stop, err := ddbrecord.StartCallLog(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// A package's run replaces the logs its earlier runs left and keeps every
// other package's: those stand for results Go's test cache replays.
func TestResetPackageCallLogs(t *testing.T) {
	dir := t.TempDir()
	getenv := func(k string) string { return map[string]string{ddbrecord.EnvCallsDir: dir}[k] }
	for range 2 {
		l, err := ddbrecord.OpenCallLog(dir)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	other := filepath.Join(dir, "lambdas_devtools_ddbrecord_x", "calls-1.jsonl")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	own, _ := filepath.Glob(filepath.Join(dir, "lambdas_devtools_ddbrecord", "calls-*.jsonl"))
	if err := ddbrecord.ResetPackageCallLogs(getenv); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*", "calls-*.jsonl"))
	if len(own) != 2 || len(left) != 1 || left[0] != other {
		t.Errorf("before %v, after %v; want only %s left", own, left, other)
	}
}
