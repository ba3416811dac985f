package ddb_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// refusing answers every transaction as DynamoDB does when the second
// operation's condition failed on an existing item.
type refusing struct{}

func (refusing) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return nil, &types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{
		{Code: aws.String("None")},
		{Code: aws.String("ConditionalCheckFailed"), Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "42"}}},
	}}
}

func ExampleTx() {
	var (
		ErrProjectNotFound = errors.New("project not found")
		ErrTaskExists      = errors.New("task exists")
	)
	var tx ddb.Tx
	tx.Check(&types.ConditionCheck{TableName: aws.String("app"), ConditionExpression: aws.String("attribute_exists(pk)")}, ErrProjectNotFound).
		Put(&types.Put{TableName: aws.String("app"), ConditionExpression: aws.String("attribute_not_exists(pk)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}, ErrTaskExists)

	err := tx.Run(context.Background(), refusing{})
	var old struct {
		ID string `dynamodbav:"id"`
	}
	found, _ := ddb.OldItem(err, &old)
	fmt.Println(errors.Is(err, ErrTaskExists), errors.Is(err, ErrProjectNotFound), found, old.ID)
	// Output: true false true 42
}

func ExampleMissingOr() {
	var (
		ErrNotFound = errors.New("not found")
		ErrStale    = errors.New("changed since read")
	)
	// An update conditioned on the version read: without an item the
	// condition failed because the item is gone, with one because it moved on.
	onFail := ddb.MissingOr(ErrNotFound, ErrStale)
	gone := ddb.WrapCond("UpdateItem", &types.ConditionalCheckFailedException{}, onFail)
	moved := ddb.WrapCond("UpdateItem", &types.ConditionalCheckFailedException{
		Item: map[string]types.AttributeValue{"version": &types.AttributeValueMemberN{Value: "3"}}}, onFail)
	fmt.Println(gone)
	fmt.Println(moved)
	// Output:
	// not found
	// changed since read
}

func ExampleIfConditionFailed() {
	type ticket struct {
		Status string `dynamodbav:"status"`
	}
	// What UpdateItem returns for a ticket that was closed, with
	// ReturnValuesOnConditionCheckFailure=ALL_OLD.
	err := ddb.Wrap("UpdateItem", &types.ConditionalCheckFailedException{
		Item: map[string]types.AttributeValue{"status": &types.AttributeValueMemberS{Value: "closed"}}})
	err = ddb.IfConditionFailed(err, func(old *ticket) error {
		if old == nil {
			return errors.New("no such ticket")
		}
		return fmt.Errorf("ticket is %s", old.Status)
	})
	fmt.Println(err)
	// Output: ticket is closed
}

// memory answers a Query from a sorted slice, as DynamoDB does for one
// partition: Limit items after ExclusiveStartKey, and LastEvaluatedKey
// when it stopped early.
type memory []string

func (m memory) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	i := 0
	if k, ok := in.ExclusiveStartKey["sk"].(*types.AttributeValueMemberS); ok {
		for i < len(m) && m[i] <= k.Value {
			i++
		}
	}
	out := &dynamodb.QueryOutput{}
	for ; i < len(m) && len(out.Items) < int(*in.Limit); i++ {
		out.Items = append(out.Items, map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "p"}, "sk": &types.AttributeValueMemberS{Value: m[i]}})
	}
	out.Count, out.ScannedCount = int32(len(out.Items)), int32(len(out.Items))
	if i < len(m) {
		out.LastEvaluatedKey = out.Items[len(out.Items)-1]
	}
	return out, nil
}

func ExampleQuery() {
	type item struct {
		SK string `dynamodbav:"sk"`
	}
	// The page key: json for the cursor, dynamodbav for the start key.
	type key struct {
		PK string `json:"p" dynamodbav:"pk"`
		SK string `json:"s" dynamodbav:"sk"`
	}
	q := ddb.Query[item, key]{
		Input: &dynamodb.QueryInput{TableName: aws.String("app")},
		Pager: ddb.Pager{Size: 2},
		Codec: ddb.NewCursorCodec([]byte("secret")),
		Scope: "example/p",
		Check: func(k key) error {
			if k.PK != "p" {
				return ddb.ErrInvalidCursor
			}
			return nil
		},
	}
	client := memory{"a", "b", "c", "d", "e"}
	for token, n := "", 1; ; n++ {
		page, err := q.Page(context.Background(), client, token)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("page", n, page.Items, page.Next != "")
		if token = page.Next; token == "" {
			break
		}
	}
	_, err := q.Page(context.Background(), client, "forged")
	fmt.Println(err)
	// Output:
	// page 1 [{a} {b}] true
	// page 2 [{c} {d}] true
	// page 3 [{e}] false
	// cursor: invalid cursor
}

// closed answers UpdateItem as DynamoDB does when the condition failed on
// a closed ticket, with ReturnValuesOnConditionCheckFailure=ALL_OLD.
type closed struct{}

func (closed) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, &types.ConditionalCheckFailedException{Item: map[string]types.AttributeValue{"status": &types.AttributeValueMemberS{Value: "closed"}}}
}

func ExampleUpdateExpr() {
	key := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "t-1"}}
	reopen := ddb.Expr{
		Update:    "SET #status = :open",
		Condition: "attribute_exists(#id) AND #status <> :closed",
		Names:     map[string]string{"#status": "status", "#id": "id"},
		Values:    map[string]types.AttributeValue{":open": ddb.S("open"), ":closed": ddb.S("closed")},
	}
	_, err := ddb.UpdateExpr(context.Background(), closed{}, "tickets", key, reopen)
	err = ddb.IfConditionFailed(err, func(old *struct {
		Status string `dynamodbav:"status"`
	}) error {
		if old == nil {
			return errors.New("no such ticket")
		}
		return fmt.Errorf("cannot reopen a %s ticket", old.Status)
	})
	fmt.Println(err)
	// Output: cannot reopen a closed ticket
}

func ExampleAll() {
	client := memory{"a", "b", "c", "d", "e"}
	in := &dynamodb.QueryInput{TableName: aws.String("app"), Limit: aws.Int32(2)}
	n := 0
	for item, err := range ddb.All(context.Background(), client, in) {
		if err != nil {
			fmt.Println(err)
			return
		}
		n++
		if item["sk"].(*types.AttributeValueMemberS).Value == "d" {
			break // the fifth item's page is never read
		}
	}
	fmt.Println(n)
	// Output: 4
}
