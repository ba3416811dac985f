package poller

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Stak stream mapping's pattern, as the golden template has it.
const stakPattern = `{"dynamodb":{"Keys":{"sk":{"S":[{"prefix":"m#"}]}}},"eventName":["REMOVE"],"userIdentity":{"principalId":["dynamodb.amazonaws.com"],"type":["Service"]}}`

func TestFilters(t *testing.T) {
	fs, err := parseFilters([]string{stakPattern})
	require.NoError(t, err)
	rec := func(name, sk string, ttl bool) events.DynamoDBEventRecord {
		r := events.DynamoDBEventRecord{EventName: name, Change: events.DynamoDBStreamRecord{
			Keys:     map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute("p"), "sk": events.NewStringAttribute(sk)},
			OldImage: map[string]events.DynamoDBAttributeValue{"sk": events.NewStringAttribute(sk)},
		}}
		if ttl {
			r.UserIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
		}
		return r
	}
	for _, tt := range []struct {
		name string
		rec  events.DynamoDBEventRecord
		want bool
	}{
		{"TTL deletion of a message, as AWS sends it", rec("REMOVE", "m#1", true), true},
		{"TTL deletion as DynamoDB Local sends it", asLambdaSees(rec("UNKNOWN_TO_SDK_VERSION", "m#1", false)), true},
		{"a delete by a user", rec("REMOVE", "m#1", false), false},
		{"TTL deletion of a marker", rec("REMOVE", "marker#1", true), false},
		{"an insert", func() events.DynamoDBEventRecord { r := rec("INSERT", "m#1", false); r.Change.OldImage = nil; return r }(), false},
	} {
		assert.Equal(t, tt.want, keep(fs, tt.rec), "%s: keep", tt.name)
	}
	assert.True(t, keep(nil, rec("INSERT", "x", false)), "no filter dropped a record")
	_, err = parseFilters([]string{"{"})
	assert.Error(t, err, "a broken pattern was accepted")
	exists, _ := parseFilters([]string{`{"userIdentity":[{"exists":false}]}`})
	assert.True(t, keep(exists, rec("REMOVE", "m#1", false)), "exists:false dropped a record without a user identity")
	assert.False(t, keep(exists, rec("REMOVE", "m#1", true)), "exists:false kept a record with a user identity")
}
