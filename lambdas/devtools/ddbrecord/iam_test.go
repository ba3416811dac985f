package ddbrecord_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/stretchr/testify/assert"
)

func TestNeeds(t *testing.T) {
	a, b := aws.String("a"), aws.String("b")
	need := func(action, table, index string) ddbrecord.Access {
		return ddbrecord.Access{Action: "dynamodb:" + action, Table: table, Index: index}
	}
	tests := []struct {
		name   string
		op     string
		params any
		want   []ddbrecord.Access
	}{
		{"get", "GetItem", &dynamodb.GetItemInput{TableName: a}, []ddbrecord.Access{need("GetItem", "a", "")}},
		{"put", "PutItem", &dynamodb.PutItemInput{TableName: a}, []ddbrecord.Access{need("PutItem", "a", "")}},
		{"update", "UpdateItem", &dynamodb.UpdateItemInput{TableName: a}, []ddbrecord.Access{need("UpdateItem", "a", "")}},
		{"delete", "DeleteItem", &dynamodb.DeleteItemInput{TableName: a}, []ddbrecord.Access{need("DeleteItem", "a", "")}},
		{"query the table", "Query", &dynamodb.QueryInput{TableName: a}, []ddbrecord.Access{need("Query", "a", "")}},
		{"query an index", "Query", &dynamodb.QueryInput{TableName: a, IndexName: aws.String("GSI1")}, []ddbrecord.Access{need("Query", "a", "GSI1")}},
		{"scan an index", "Scan", &dynamodb.ScanInput{TableName: a, IndexName: aws.String("GSI1")}, []ddbrecord.Access{need("Scan", "a", "GSI1")}},
		{"transaction: each item's own action, once per table", "TransactWriteItems", &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: b}},
			{Put: &types.Put{TableName: a}},
			{Put: &types.Put{TableName: a}},
			{ConditionCheck: &types.ConditionCheck{TableName: a}},
			{Delete: &types.Delete{TableName: b}},
		}}, []ddbrecord.Access{need("ConditionCheckItem", "a", ""), need("PutItem", "a", ""), need("DeleteItem", "b", ""), need("UpdateItem", "b", "")}},
		{"transactional get is GetItem", "TransactGetItems", &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
			{Get: &types.Get{TableName: b}}, {Get: &types.Get{TableName: a}},
		}}, []ddbrecord.Access{need("GetItem", "a", ""), need("GetItem", "b", "")}},
		{"batch get", "BatchGetItem", &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"b": {}, "a": {}}},
			[]ddbrecord.Access{need("BatchGetItem", "a", ""), need("BatchGetItem", "b", "")}},
		{"batch write", "BatchWriteItem", &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"a": nil}},
			[]ddbrecord.Access{need("BatchWriteItem", "a", "")}},
		{"another operation on a table", "DescribeTable", &dynamodb.DescribeTableInput{TableName: a}, []ddbrecord.Access{need("DescribeTable", "a", "")}},
		{"an operation on no table", "ListTables", &dynamodb.ListTablesInput{}, []ddbrecord.Access{need("ListTables", "", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ddbrecord.Needs(tt.op, tt.params), "Needs(%s)", tt.op)
		})
	}
}
