package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/stak"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// The command erases a user it finds through the tenant's inboxes, prints
// the report, and a second run deletes nothing.
func TestRun(t *testing.T) {
	ctx := context.Background()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "stak"))
	table := names["InboxA8E05DC3"]
	require.NotEmpty(t, table, "tables %v", names)
	client := testenv.Client(t)
	u1 := stakcontract.UserPK("acme", "u1", "main")
	for _, item := range []map[string]types.AttributeValue{
		{stakcontract.AttrPK: s(stakcontract.TenantPK("acme")), stakcontract.AttrSK: s(stakcontract.PrefixInbox + "main")},
		{stakcontract.AttrPK: s(u1), stakcontract.AttrSK: s(stakcontract.PrefixMessage + "0001"), stakcontract.AttrKind: s("UM"), stakcontract.AttrExpiredAt: n("4102444800")},
		{stakcontract.AttrPK: s(u1), stakcontract.AttrSK: s(stakcontract.KeyStatsAll), stakcontract.AttrKind: s("US"),
			stakcontract.AttrPublished: n("1"), stakcontract.AttrRead: n("0"), stakcontract.AttrUID: s("u1")},
	} {
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
		require.NoError(t, err)
	}
	getenv := testenv.Getenv(t, map[string]string{stakcontract.EnvTable: table})
	for run1 := range 2 {
		var out bytes.Buffer
		require.NoError(t, run(ctx, []string{"-tenant", "acme", "-uid", "u1"}, getenv, &out), "run %d", run1+1)
		var res stak.Erasure
		require.NoError(t, json.Unmarshal(out.Bytes(), &res), "report %s", out.String())
		want := []int{1, 1}
		if run1 == 1 {
			want = []int{0, 0}
		}
		assert.Equal(t, want, []int{res.Messages, res.Counters}, "run %d: messages and counters deleted", run1+1)
		assert.Equal(t, []string{"main"}, res.Inboxes, "run %d: inboxes", run1+1)
	}
	left, err := client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("#pk = :pk"),
		ExpressionAttributeNames: map[string]string{"#pk": stakcontract.AttrPK}, ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(u1)}})
	require.NoError(t, err)
	assert.Empty(t, left.Items, "u1's partition")
}

func TestRunRefusesIncompleteArguments(t *testing.T) {
	env := map[string]string{stakcontract.EnvTable: "t"}
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"no uid", []string{"-tenant", "acme"}, env},
		{"no tenant", []string{"-uid", "u1"}, env},
		{"no table", []string{"-tenant", "acme", "-uid", "u1"}, nil},
		{"extra argument", []string{"-tenant", "acme", "-uid", "u1", "u2"}, env},
		{"unknown flag", []string{"-tenant", "acme", "-user", "u1"}, env},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, func(k string) string { return tt.env[k] }, &bytes.Buffer{})
			assert.ErrorIs(t, err, errUsage)
		})
	}
}
