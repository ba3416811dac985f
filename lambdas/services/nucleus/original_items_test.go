package nucleus_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
)

// TestItemsOfTheOriginalSystemChange: accounts and schedules that
// document 001's system wrote have no version (decision 15 added it), and
// every read-modify-write is guarded by the version read. Such an item is
// guarded by still having none: a PATCH succeeds and gives it version 1
// (it answered 409 concurrent_update forever before), and a DELETE
// succeeds (it too answered 409).
func TestItemsOfTheOriginalSystemChange(t *testing.T) {
	s := newService(t, options{})
	const acct = "123456789012"
	s.createAccount(t, acct, "Dev", "active")
	sc := s.createSchedule(t, "Office hours")
	original := func(pk string) {
		t.Helper()
		_, err := s.Client.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{
			TableName: aws.String(s.tables.App),
			Key: map[string]types.AttributeValue{
				contract.AttrPK: &types.AttributeValueMemberS{Value: pk},
				contract.AttrSK: &types.AttributeValueMemberS{Value: contract.KeyMetadata}},
			UpdateExpression:         aws.String("REMOVE #v"),
			ExpressionAttributeNames: map[string]string{"#v": contract.AttrVersion},
		})
		require.NoError(t, err, "as the original system wrote %s", pk)
	}
	version := func(pk string) any {
		t.Helper()
		out, err := s.Client.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(s.tables.App), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{
				contract.AttrPK: &types.AttributeValueMemberS{Value: pk},
				contract.AttrSK: &types.AttributeValueMemberS{Value: contract.KeyMetadata}}})
		require.NoError(t, err)
		if n, ok := out.Item[contract.AttrVersion].(*types.AttributeValueMemberN); ok {
			return n.Value
		}
		return nil
	}

	original(contract.PrefixAccount + acct)
	var a nucleus.Account
	s.MustRoute(t, 200, contract.UpdateAccount, `{"account_name":"Alpha"}`, &a, acct)
	assert.Equal(t, "Alpha", a.AccountName, "account: renamed")
	assert.Equal(t, "1", version(contract.PrefixAccount+acct), "account: the PATCH gave it version 1")

	original(contract.PrefixSchedule + sc.ScheduleID)
	var got nucleus.Schedule
	s.MustRoute(t, 200, contract.UpdateSchedule, `{"schedule_name":"Renamed"}`, &got, sc.ScheduleID)
	assert.Equal(t, "Renamed", got.ScheduleName, "schedule: renamed")
	assert.Equal(t, "1", version(contract.PrefixSchedule+sc.ScheduleID), "schedule: the PATCH gave it version 1")

	original(contract.PrefixSchedule + sc.ScheduleID)
	s.MustRoute(t, 204, contract.DeleteSchedule, "", nil, sc.ScheduleID)
	assert.Nil(t, version(contract.PrefixSchedule+sc.ScheduleID), "schedule: deleted")

	original(contract.PrefixAccount + acct)
	s.MustRoute(t, 204, contract.DeleteAccount, "", nil, acct)
	assert.Nil(t, version(contract.PrefixAccount+acct), "account: deleted")
}
