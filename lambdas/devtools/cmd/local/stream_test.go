package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/require"
)

// withStreamConsumer writes the ITSM template and the Stak template plus a
// stak-stream function and its event source mapping (what the stack will
// synthesize) into a temporary directory.
func withStreamConsumer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	itsm, err := os.ReadFile(testenv.Template(t, "dev", "itsm"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "itsm.template.json"), itsm, 0o644))
	raw, err := os.ReadFile(testenv.Template(t, "dev", "stak"))
	require.NoError(t, err)
	var tmpl map[string]any
	require.NoError(t, json.Unmarshal(raw, &tmpl))
	res := tmpl["Resources"].(map[string]any)
	res["StreamFn"] = map[string]any{"Type": "AWS::Lambda::Function", "Properties": map[string]any{
		"Environment": map[string]any{"Variables": map[string]any{
			"DYNASTACK_SERVICE": "stak-stream", "STAK_INBOX_TABLE": map[string]any{"Ref": "InboxA8E05DC3"},
		}},
	}}
	// As the stacks publish every function: behind its live alias, which
	// the mapping names (the runner follows it to the function).
	res["StreamFnVersion"] = map[string]any{"Type": "AWS::Lambda::Version", "Properties": map[string]any{
		"FunctionName": map[string]any{"Ref": "StreamFn"},
	}}
	res["StreamFnLive"] = map[string]any{"Type": "AWS::Lambda::Alias", "Properties": map[string]any{
		"Name": "live", "FunctionName": map[string]any{"Ref": "StreamFn"},
		"FunctionVersion": map[string]any{"Fn::GetAtt": []string{"StreamFnVersion", "Version"}},
	}}
	res["StreamFnMapping"] = map[string]any{"Type": "AWS::Lambda::EventSourceMapping", "Properties": map[string]any{
		"FunctionName":     map[string]any{"Ref": "StreamFnLive"},
		"EventSourceArn":   map[string]any{"Fn::GetAtt": []string{"InboxA8E05DC3", "StreamArn"}},
		"StartingPosition": "LATEST", "BatchSize": 100,
	}}
	b, _ := json.Marshal(tmpl)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stak.template.json"), b, 0o644))
	return dir
}

// TestStreamConsumer: the runner feeds the table's stream to the consumer,
// so a message that DynamoDB Local expires takes its count with it.
func TestStreamConsumer(t *testing.T) {
	t.Parallel()
	// Its own DynamoDB Local: the shared one's streams carry every other
	// test's tables, and its TTL sweep is what this test waits for.
	r := startEnv(t, withStreamConsumer(t), ownJava)
	m := regexp.MustCompile(`\(dynamodb (\S+)\)`).FindStringSubmatch(r.ready)
	require.NotNil(t, m, "no endpoint in %q", r.ready)
	client, err := ddb.NewClient(context.Background(), ddblocal.WithEndpoint(m[1], nil))
	require.NoError(t, err)
	ctx := context.Background()
	table := aws.String("stak-inbox-dev" + r.suffix)
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	pk := "t#acmeG#$public#main"
	// A public message that expired a day ago, counted in the public
	// counter as the API would have counted it.
	for _, item := range []map[string]types.AttributeValue{
		{"pk": str(pk), "sk": str("c#*"), "published": &types.AttributeValueMemberN{Value: "1"}},
		{"pk": str(pk), "sk": str("m#00000000000000000a"), "kind": str("UM"),
			"audiences": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"audiences": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"kind": str("everyone")}}}},
			"expiredat": &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Add(-24*time.Hour).Unix(), 10)}},
	} {
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item})
		require.NoError(t, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: map[string]types.AttributeValue{"pk": str(pk), "sk": str("c#*")}})
		require.NoError(t, err)
		if n, ok := out.Item["published"].(*types.AttributeValueMemberN); ok && n.Value == "0" {
			return
		}
		if time.Now().After(deadline) {
			require.FailNow(t, "public counter not 0 after 60s", "published %v", out.Item["published"])
		}
		time.Sleep(500 * time.Millisecond)
	}
}
