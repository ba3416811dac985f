package ddb_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGetAndUpdate: UpdateExpr returns the new item, or on a failed
// condition the old one, or none when there was no item; without a
// condition it is an upsert. (These cases once ran through the expression
// builders too, which answered alike.)
func TestGetAndUpdate(t *testing.T) {
	client, table := pagerTable(t, 1, nil)
	ctx := context.Background()
	k := func(sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "p"}, "sk": &types.AttributeValueMemberS{Value: sk}}
	}
	tests := []struct {
		name    string
		sk      string
		cond    bool // conditioned on dead = false
		wantErr error
		want    string // the old item's sk on a failed condition, or the new item's
	}{
		{"the condition holds: the new item", "000", true, nil, "000"},
		{"it failed on the item: the old one", "000", true, errGone, "000"},
		{"it failed without an item", "009", true, errTaken, ""},
		{"an upsert", "010", false, nil, "010"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ddb.Expr{Update: "SET #dead = :true", Names: map[string]string{"#dead": "dead"},
				Values: map[string]types.AttributeValue{":true": &types.AttributeValueMemberBOOL{Value: true}}}
			if tt.cond {
				e.Condition = "#dead = :false"
				e.Values[":false"] = &types.AttributeValueMemberBOOL{Value: false}
			}
			item, err := ddb.UpdateExpr(ctx, client, table, k(tt.sk), e)
			err = ddb.IfConditionFailed(err, func(old *row) error {
				if old == nil {
					return errTaken
				}
				item = map[string]types.AttributeValue{"sk": &types.AttributeValueMemberS{Value: old.SK}}
				return errGone
			})
			require.ErrorIs(t, err, tt.wantErr) // nil wants nil
			got := ""
			if item != nil {
				got = item["sk"].(*types.AttributeValueMemberS).Value
			}
			assert.Equal(t, tt.want, got, "item")
		})
	}
	for sk, want := range map[string]bool{"000": true, "001": false, "010": true} {
		item, err := ddb.Get(ctx, client, table, k(sk))
		if assert.NoError(t, err, "Get(%s)", sk) {
			assert.Equal(t, want, item != nil, "Get(%s) = %v: found", sk, item)
		}
	}
}

func TestPutNew(t *testing.T) {
	client, table := pagerTable(t, 0, nil)
	item := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "p"}, "sk": &types.AttributeValueMemberS{Value: "000"}}
	put, err := ddb.PutNew(table, item, "pk")
	require.NoError(t, err)
	for i, want := range []error{nil, ddb.ErrConditionFailed} {
		_, err := client.PutItem(context.Background(), put)
		assert.ErrorIs(t, ddb.WrapCond("PutItem", err, nil), want, "put %d", i) // nil wants nil
	}
}

// TestExprTx: a transaction of written-out operations (Expr's TxCheck,
// TxPut, TxUpdate) applies as the builders' would, and each failed
// condition still means what its operation said.
func TestExprTx(t *testing.T) {
	client, table := pagerTable(t, 2, nil)
	ctx := context.Background()
	k := func(sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "p"}, "sk": &types.AttributeValueMemberS{Value: sk}}
	}
	kill := ddb.Expr{Update: "SET #dead = :true", Condition: "#dead = :false", Names: map[string]string{"#dead": "dead"},
		Values: map[string]types.AttributeValue{":true": &types.AttributeValueMemberBOOL{Value: true}, ":false": &types.AttributeValueMemberBOOL{Value: false}}}
	tx := func(checked string) ddb.Tx {
		var tx ddb.Tx
		tx.Check(ddb.Exists("pk").TxCheck(table, k(checked)), errGone).
			Put(ddb.NotExists("pk").TxPut(table, k("002")), errTaken).
			Update(kill.TxUpdate(table, k("001")), errStale)
		return tx
	}
	require.NoError(t, tx("000").Run(ctx, client))
	item, err := ddb.Get(ctx, client, table, k("001"))
	require.NoError(t, err, "001 after the update")
	require.Equal(t, &types.AttributeValueMemberBOOL{Value: true}, item["dead"], "001 after the update: dead")
	for _, tt := range []struct {
		checked string
		want    error
	}{{"000", errTaken}, {"009", errGone}} {
		assert.ErrorIs(t, tx(tt.checked).Run(ctx, client), tt.want, "checking %s again", tt.checked)
	}
	// A put without a condition sends none, and no empty maps.
	p := (ddb.Expr{}).TxPut(table, k("003"))
	assert.Nil(t, p.ConditionExpression, "unconditional put: condition")
	assert.Nil(t, p.ExpressionAttributeNames, "unconditional put: names")
	assert.Nil(t, p.ExpressionAttributeValues, "unconditional put: values")
}

// TestExprQuery: Expr.Query sends the key condition, filter and
// projection it holds, and leaves out those it does not.
func TestExprQuery(t *testing.T) {
	client, table := pagerTable(t, 4, map[int]bool{1: true})
	e := ddb.Expr{KeyCondition: "#pk = :p AND begins_with(#sk, :pre)", Filter: "#dead = :false", Projection: "#sk",
		Names: map[string]string{"#pk": "pk", "#sk": "sk", "#dead": "dead"},
		Values: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "p"}, ":pre": &types.AttributeValueMemberS{Value: "00"},
			":false": &types.AttributeValueMemberBOOL{Value: false}}}
	in := e.Query(table)
	in.ConsistentRead = aws.Bool(true)
	out, err := client.Query(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, "000 002 003 ", sks(out.Items), "items (001 is dead)")
	for _, it := range out.Items {
		assert.Len(t, it, 1, "only sk (the projection)")
	}
	bare := ddb.Expr{KeyCondition: "#pk = :p", Names: e.Names, Values: e.Values}.Query(table)
	assert.Nil(t, bare.FilterExpression, "a query without filter sends one")
	assert.Nil(t, bare.ProjectionExpression, "a query without projection sends one")
}

// TestExprPutAndDelete: Expr.Put and Expr.TxDelete send e's condition, or
// none when it is "", and a failed one means what the caller said.
func TestExprPutAndDelete(t *testing.T) {
	client, table := pagerTable(t, 2, nil)
	ctx := context.Background()
	k := func(sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "p"}, "sk": &types.AttributeValueMemberS{Value: sk}}
	}
	put := func(e ddb.Expr, sk string) error {
		_, err := client.PutItem(ctx, e.Put(table, k(sk)))
		return ddb.WrapCond("PutItem", err, errTaken)
	}
	del := func(e ddb.Expr, sk string) error {
		var tx ddb.Tx
		return tx.Delete(e.TxDelete(table, k(sk)), errGone).Run(ctx, client)
	}
	tests := []struct {
		name  string
		write func(ddb.Expr, string) error
		e     ddb.Expr
		sk    string
		want  error
		found bool // whether sk exists afterwards
	}{
		{"a put if new, of a new key", put, ddb.NotExists("pk"), "005", nil, true},
		{"a put if new, of a taken key", put, ddb.NotExists("pk"), "005", errTaken, true},
		{"an unconditional put overwrites", put, ddb.Expr{}, "005", nil, true},
		{"a delete if present, of an item", del, ddb.Exists("pk"), "000", nil, false},
		{"a delete if present, of none", del, ddb.Exists("pk"), "000", errGone, false},
		{"an unconditional delete", del, ddb.Expr{}, "001", nil, false},
		{"an unconditional delete of none", del, ddb.Expr{}, "001", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, tt.write(tt.e, tt.sk), tt.want) // nil wants nil
			item, err := ddb.Get(ctx, client, table, k(tt.sk))
			if assert.NoError(t, err, "Get(%s)", tt.sk) {
				assert.Equal(t, tt.found, item != nil, "Get(%s) = %v: found", tt.sk, item)
			}
		})
	}
	// Without a condition, no condition and no empty maps are sent.
	p := (ddb.Expr{}).Put(table, k("009"))
	assert.Nil(t, p.ConditionExpression, "unconditional put: condition")
	assert.Nil(t, p.ExpressionAttributeNames, "unconditional put: names")
	assert.Nil(t, p.ExpressionAttributeValues, "unconditional put: values")
	d := (ddb.Expr{}).TxDelete(table, k("009"))
	assert.Nil(t, d.ConditionExpression, "unconditional delete: condition")
	assert.Nil(t, d.ExpressionAttributeNames, "unconditional delete: names")
	assert.Nil(t, d.ExpressionAttributeValues, "unconditional delete: values")
}
