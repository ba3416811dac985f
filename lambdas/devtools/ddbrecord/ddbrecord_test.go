package ddbrecord_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// table creates a table keyed by pk with a GSI on g (all attributes
// projected).
func table(t *testing.T, client *dynamodb.Client) string {
	t.Helper()
	name := "rec-" + testenv.Suffix()
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	hash := func(n string) []types.KeySchemaElement {
		return []types.KeySchemaElement{{AttributeName: aws.String(n), KeyType: types.KeyTypeHash}}
	}
	_, err := client.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{str("pk"), str("g")}, KeySchema: hash("pk"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("byG"), KeySchema: hash("g"),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}},
	})
	require.NoError(t, err)
	return name
}

func TestRecorder(t *testing.T) {
	ctx := context.Background()
	raw := testenv.Client(t)
	a, b := table(t, raw), table(t, raw)
	var rec ddbrecord.Recorder
	c := rec.Client(raw)
	var client ddb.API = c // what a store holds
	steps := []struct {
		name string
		do   func() error
		want ddbrecord.Call
	}{
		{"put with a GSI copy", func() error {
			_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &a, Item: map[string]types.AttributeValue{"pk": s("1"), "g": s("x")}})
			return err
		}, ddbrecord.Call{Operation: "PutItem", Table: a, Write: 2}},
		{"put without", func() error {
			_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &a, Item: map[string]types.AttributeValue{"pk": s("2")}})
			return err
		}, ddbrecord.Call{Operation: "PutItem", Table: a, Write: 1}},
		{"consistent get", func() error {
			_, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &a, Key: map[string]types.AttributeValue{"pk": s("1")}, ConsistentRead: aws.Bool(true)})
			return err
		}, ddbrecord.Call{Operation: "GetItem", Table: a, Read: 1}},
		{"eventual get", func() error {
			_, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &a, Key: map[string]types.AttributeValue{"pk": s("1")}})
			return err
		}, ddbrecord.Call{Operation: "GetItem", Table: a, Read: 0.5}},
		{"query on an index", func() error {
			_, err := client.Query(ctx, &dynamodb.QueryInput{TableName: &a, IndexName: aws.String("byG"),
				KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("x")}})
			return err
		}, ddbrecord.Call{Operation: "Query", Table: a, Index: "byG", Read: 0.5}},
		{"failed condition", func() error {
			_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &a, Item: map[string]types.AttributeValue{"pk": s("1")},
				ConditionExpression: aws.String("attribute_not_exists(pk)")})
			if err == nil {
				return errors.New("condition passed")
			}
			return nil
		}, ddbrecord.Call{Operation: "PutItem", Table: a}},
	}
	for _, st := range steps {
		rec.Reset()
		require.NoError(t, st.do(), "%s", st.name)
		calls := rec.Calls()
		require.Len(t, calls, 1, "%s: calls", st.name)
		got := calls[0]
		assert.Equal(t, st.name == "failed condition", got.Err != nil, "%s: err %v", st.name, got.Err)
		got.Err = nil
		assert.Equal(t, st.want, got, "%s: recorded", st.name)
	}

	rec.Reset()
	in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &a, Item: map[string]types.AttributeValue{"pk": s("3")}}},
		{Put: &types.Put{TableName: &b, Item: map[string]types.AttributeValue{"pk": s("3"), "g": s("y")}}},
	}}
	_, err := client.TransactWriteItems(ctx, in)
	require.NoError(t, err)
	assert.Empty(t, in.ReturnConsumedCapacity, "the caller's input was changed")
	total := rec.Total()
	byKey := rec.ByKey()
	// A transactional write costs two WCU per KB per table and index.
	assert.Equal(t, 1, total.Requests, "transaction: total requests")
	assert.Equal(t, 6.0, total.Write, "transaction: total WCU")
	assert.Equal(t, 2.0, byKey[ddbrecord.Key{Operation: "TransactWriteItems", Table: a}].Write, "transaction: WCU of table a; by key %v", byKey)
	assert.Equal(t, 4.0, byKey[ddbrecord.Key{Operation: "TransactWriteItems", Table: b}].Write, "transaction: WCU of table b and its index; by key %v", byKey)
	assert.Contains(t, total.String(), "1 req, 0 RCU, 6 WCU", "String")
}
