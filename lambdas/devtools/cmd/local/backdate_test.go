package main_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	pm "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// backdate sets the time attributes of one AgenticPM item in the runner's
// table to a minute ago, as if that time had passed: the API refuses a
// heldUntil less than agenticpm.MinHold ahead and an expiresAt less than
// agenticpm.MinEscalationExpiry ahead, and a test does not wait minutes
// for the release job. set maps attribute names to a format of the past
// time ("%s" is replaced by it; e.g. GSI1SK "<time>#<id>").
func backdate(t *testing.T, r *runner, pk, sk string, set map[string]func(past string) string) {
	t.Helper()
	m := regexp.MustCompile(`dynamodb (http://[0-9.:]+)`).FindStringSubmatch(r.ready)
	require.NotNil(t, m, "no DynamoDB endpoint in the ready line %q", r.ready)
	client, err := ddb.NewClient(context.Background(), ddblocal.WithEndpoint(m[1], nil))
	require.NoError(t, err)
	past := agenticpm.Timestamp(time.Now().Add(-time.Minute))
	update, names, values := "SET", map[string]string{}, map[string]types.AttributeValue{}
	i := 0
	for attr, value := range set {
		n, v := "#a"+string(rune('0'+i)), ":v"+string(rune('0'+i))
		if i > 0 {
			update += ","
		}
		update += " " + n + " = " + v
		names[n], values[v] = attr, &types.AttributeValueMemberS{Value: value(past)}
		i++
	}
	_, err = client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String("AgenticPM-dev" + r.suffix),
		Key:              map[string]types.AttributeValue{pm.AttrPK: &types.AttributeValueMemberS{Value: pk}, pm.AttrSK: &types.AttributeValueMemberS{Value: sk}},
		UpdateExpression: aws.String(update), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		ConditionExpression: aws.String("attribute_exists(" + pm.AttrPK + ")")})
	require.NoError(t, err, "backdate %s %s", pk, sk)
}
