package ddbrecord_test

import (
	"context"
	"github.com/dynastack/dynastack/constructs/service"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCallLog(t *testing.T) {
	ctx := context.Background()
	raw := testenv.Client(t)
	tbl := table(t, raw)
	dir := t.TempDir()
	// This test binary may itself be recording (make test): the test's
	// log takes over until it stops.
	stop, err := ddbrecord.StartCallLog(func(k string) string { return map[string]string{ddbrecord.EnvCallsDir: dir}[k] })
	require.NoError(t, err)
	defer stop()

	// A function's client, made the way its constructor makes it when
	// the dev side passes the recorder.
	getenv := testenv.Getenv(t, map[string]string{service.EnvFunction: "fn"})
	fn, err := ddb.NewClient(ctx, getenv, ddbrecord.ClientOptions(getenv)...)
	require.NoError(t, err)
	item := map[string]types.AttributeValue{"pk": s("1"), "g": s("x")}
	for range 3 { // logged once
		_, err := fn.PutItem(ctx, &dynamodb.PutItemInput{TableName: &tbl, Item: item})
		require.NoError(t, err)
	}
	_, err = fn.Query(ctx, &dynamodb.QueryInput{TableName: &tbl, IndexName: aws.String("byG"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("x")}})
	require.NoError(t, err)
	// A refused request is logged all the same.
	_, err = fn.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("no-such-table"), Key: item})
	require.Error(t, err, "delete from a missing table succeeded")
	// A client of no function (a test's fixtures) is not logged.
	assert.Empty(t, ddbrecord.ClientOptions(testenv.Getenv(t, nil)), "recording options for a client of no function")
	_, err = testenv.Client(t).GetItem(ctx, &dynamodb.GetItemInput{TableName: &tbl, Key: map[string]types.AttributeValue{"pk": s("1")}})
	require.NoError(t, err)
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", "itsm"))
	require.NoError(t, err)
	require.NoError(t, ddbrecord.LogTables(tmpl, map[string]string{"Tickets83B11BB2": "tickets-x"}))

	// Read while the log is still open: a process killed now loses nothing.
	logs, err := ddbrecord.ReadCallLogs(dir)
	require.NoError(t, err)
	call := func(action, table, index string) ddbrecord.FunctionCall {
		return ddbrecord.FunctionCall{Function: "fn", Access: ddbrecord.Access{Action: "dynamodb:" + action, Table: table, Index: index}}
	}
	want := []ddbrecord.FunctionCall{call("PutItem", tbl, ""), call("Query", tbl, "byG"), call("DeleteItem", "no-such-table", "")}
	assert.Equal(t, 1, logs.Files, "logged files")
	assert.Equal(t, want, logs.Calls, "logged calls")
	assert.Equal(t, map[string]ddbrecord.TableOrigin{"tickets-x": {LogicalID: "Tickets83B11BB2", TemplateName: "poc-itsm-tickets-dev"}}, logs.Tables, "tables")

	require.NoError(t, stop())
	_, err = fn.GetItem(ctx, &dynamodb.GetItemInput{TableName: &tbl, Key: map[string]types.AttributeValue{"pk": s("1")}})
	assert.Error(t, err, "a call that could not be logged was sent")
}

func TestNoCallLogWithoutTheVariable(t *testing.T) {
	stop, err := ddbrecord.StartCallLog(func(string) string { return "" })
	require.NoError(t, err)
	require.NoError(t, stop())
}

// A package's run replaces the logs its earlier runs left and keeps every
// other package's: those stand for results Go's test cache replays.
func TestResetPackageCallLogs(t *testing.T) {
	dir := t.TempDir()
	getenv := func(k string) string { return map[string]string{ddbrecord.EnvCallsDir: dir}[k] }
	for range 2 {
		l, err := ddbrecord.OpenCallLog(dir)
		require.NoError(t, err)
		l.Close()
	}
	other := filepath.Join(dir, "lambdas_devtools_ddbrecord_x", "calls-1.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(other), 0o755))
	require.NoError(t, os.WriteFile(other, nil, 0o644))
	own, _ := filepath.Glob(filepath.Join(dir, "lambdas_devtools_ddbrecord", "calls-*.jsonl"))
	require.NoError(t, ddbrecord.ResetPackageCallLogs(getenv))
	left, _ := filepath.Glob(filepath.Join(dir, "*", "calls-*.jsonl"))
	assert.Len(t, own, 2, "own logs before the reset")
	assert.Equal(t, []string{other}, left, "logs left after the reset")
}
