package poller

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The Stak stream mapping's pattern, as the golden template has it.
const stakPattern = `{"dynamodb":{"Keys":{"sk":{"S":[{"prefix":"m#"}]}}},"eventName":["REMOVE"],"userIdentity":{"principalId":["dynamodb.amazonaws.com"],"type":["Service"]}}`

func TestFilters(t *testing.T) {
	fs, err := parseFilters([]string{stakPattern})
	if err != nil {
		t.Fatal(err)
	}
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
		if got := keep(fs, tt.rec); got != tt.want {
			t.Errorf("%s: keep = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !keep(nil, rec("INSERT", "x", false)) {
		t.Error("no filter dropped a record")
	}
	if _, err := parseFilters([]string{"{"}); err == nil {
		t.Error("a broken pattern was accepted")
	}
	exists, _ := parseFilters([]string{`{"userIdentity":[{"exists":false}]}`})
	if !keep(exists, rec("REMOVE", "m#1", false)) || keep(exists, rec("REMOVE", "m#1", true)) {
		t.Error("exists:false")
	}
}
