package artifact

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
)

// streamImage turns an item as the SDK reads it into the image of a
// stream record as Lambda delivers it.
func streamImage(t *testing.T, item map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	t.Helper()
	out := make(map[string]events.DynamoDBAttributeValue, len(item))
	for k, v := range item {
		out[k] = streamValue(t, v)
	}
	return out
}

func streamValue(t *testing.T, v types.AttributeValue) events.DynamoDBAttributeValue {
	t.Helper()
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute()
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value)
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value)
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = streamValue(t, e)
		}
		return events.NewListAttribute(l)
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(streamImage(t, v.Value))
	}
	require.FailNowf(t, "unknown attribute value", "attribute value %T", v)
	return events.DynamoDBAttributeValue{}
}

// expiry is the stream record of a TTL deletion of item, as AWS sends it
// (REMOVE by the DynamoDB service).
func expiry(t *testing.T, item map[string]types.AttributeValue, eventID, seq, arn string) events.DynamoDBEventRecord {
	img := streamImage(t, item)
	return events.DynamoDBEventRecord{
		AWSRegion: "us-east-1", EventID: eventID, EventName: "REMOVE", EventSource: "aws:dynamodb",
		EventVersion: "1.1", EventSourceArn: arn,
		UserIdentity: &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"},
		Change: events.DynamoDBStreamRecord{
			Keys:     map[string]events.DynamoDBAttributeValue{"pk": img["pk"], "sk": img["sk"]},
			OldImage: img, SequenceNumber: seq, SizeBytes: 200, StreamViewType: "NEW_AND_OLD_IMAGES",
		},
	}
}

// Stak's stream consumer as deployed, fed by DynamoDB Streams events for
// messages the deployed API published (docs/schemas/stak.md, "Stream
// consumer"): a batch delivered twice changes the counters once, a record
// DynamoDB refuses is reported by its sequence number
// (ReportBatchItemFailures) while the rest of the batch applies, an image
// the consumer cannot read is skipped, and an event aws-lambda-go cannot
// decode fails the invocation with an ERROR log line.
func TestStakStreamConsumer(t *testing.T) {
	s := requireStage(t)
	api := Start(t, s.RIE, s.QEMU, s.Functions["stak"])
	consumer := Start(t, s.RIE, s.QEMU, s.Functions["stak-stream"])
	table := s.Functions["stak-stream"].Env["STAK_INBOX_TABLE"]
	require.NotEmpty(t, table, "stak-stream has no STAK_INBOX_TABLE: %v", s.Functions["stak-stream"].Env)
	arn := "arn:aws:dynamodb:us-east-1:123456789012:table/" + table + "/stream/2026-11-26T00:00:00.000"

	must := func(r Request, want int) Response {
		t.Helper()
		resp := api.Do(t, r)
		require.Equal(t, want, resp.StatusCode, "%s %s: %s", r.Method, r.Path, resp.Body)
		return resp
	}
	must(Request{Method: stakcontract.PutTenant.Method, Path: stakcontract.PutTenant.URL("acme"), Body: []byte(`{"title":"Acme"}`)}, http.StatusOK)
	must(Request{Method: stakcontract.PutInbox.Method, Path: stakcontract.PutInbox.URL("acme", "ops"), Body: []byte(`{"title":"Ops"}`)}, http.StatusOK)
	must(Request{Method: stakcontract.Publish.Method, Path: stakcontract.Publish.URL("acme", "ops"), Base64: true,
		Body: []byte(`{"sender":"ci","audiences":{"kind":"users","uids":["u1","u2","u3"]},"taxonomy":{"category":"news"},"message":{"title":"hello"}}`)}, http.StatusCreated)
	stats := func(uid string) (published, read float64) {
		t.Helper()
		r := must(Request{Method: stakcontract.Stats.Method, Path: stakcontract.Stats.URL("acme", "ops", uid), Authorizer: stakUser("acme", uid)}, http.StatusOK)
		p, _ := r.JSON["published"].(float64)
		rd, _ := r.JSON["read"].(float64)
		return p, rd
	}
	for _, u := range []string{"u1", "u2", "u3"} {
		p, _ := stats(u)
		require.Equal(t, 1.0, p, "%s published after publishing", u)
	}
	// The claims API Gateway passes bind the path: another user's or
	// tenant's token is a 403, no claims at all a 401.
	must(Request{Method: stakcontract.Stats.Method, Path: stakcontract.Stats.URL("acme", "ops", "u1"), Authorizer: stakUser("acme", "u2")}, http.StatusForbidden)
	must(Request{Method: stakcontract.Stats.Method, Path: stakcontract.Stats.URL("acme", "ops", "u1"), Authorizer: stakUser("globex", "u1")}, http.StatusForbidden)
	must(Request{Method: stakcontract.Stats.Method, Path: stakcontract.Stats.URL("acme", "ops", "u1")}, http.StatusUnauthorized)

	// The stored messages, as the stream's old images would carry them.
	items := map[string]map[string]types.AttributeValue{}
	out, err := s.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table)})
	require.NoError(t, err)
	for _, it := range out.Items {
		pk := it["pk"].(*types.AttributeValueMemberS).Value
		sk := it["sk"].(*types.AttributeValueMemberS).Value
		if strings.HasPrefix(sk, "m#") {
			items[strings.TrimSuffix(strings.TrimPrefix(pk, "t#acmeU#"), "#ops")] = it
		}
	}
	require.Len(t, items, 3, "messages found, want u1, u2, u3")

	send := func(ev any) (int, []byte) {
		t.Helper()
		return consumer.Invoke(t, ev)
	}
	failures := func(status int, out []byte) []string {
		t.Helper()
		var resp events.DynamoDBEventResponse
		require.Equal(t, http.StatusOK, status, "consumer answered %s, want a DynamoDBEventResponse", out)
		require.NoError(t, json.Unmarshal(out, &resp), "consumer answered %s, want a DynamoDBEventResponse", out)
		require.NotNil(t, resp.BatchItemFailures, "consumer answered %s, want a DynamoDBEventResponse", out)
		var ids []string
		for _, f := range resp.BatchItemFailures {
			ids = append(ids, f.ItemIdentifier)
		}
		return ids
	}

	t.Run("batch delivered twice", func(t *testing.T) {
		batch := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{expiry(t, items["u1"], "9a1c0c3e-0001", "100000000000000000001", arn)}}
		for i := range 2 {
			require.Empty(t, failures(send(batch)), "delivery %d: failures", i+1)
		}
		p, _ := stats("u1")
		assert.Equal(t, 0.0, p, "u1 published after one expiry delivered twice")
	})

	t.Run("failing record reported", func(t *testing.T) {
		// DynamoDB refuses the dedupe marker of this record (its sort key
		// would pass 1024 bytes): a fault of one record, reported alone.
		bad := expiry(t, items["u2"], strings.Repeat("e", 1100), "200000000000000000001", arn)
		good := expiry(t, items["u3"], "9a1c0c3e-0003", "200000000000000000002", arn)
		ids := failures(send(events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{bad, good}}))
		assert.Equal(t, bad.Change.SequenceNumber, strings.Join(ids, ","), "batchItemFailures %v: the failed record's alone", ids)
		p, _ := stats("u2")
		assert.Equal(t, 1.0, p, "u2 published (its record failed)")
		p, _ = stats("u3")
		assert.Equal(t, 0.0, p, "u3 published (its record applied)")
		consumer.WaitRecord(t, "ERROR for the failed record", func(r LogRecord) bool {
			return r.Fields["msg"] == "stream record failed" && r.Fields["level"] == "ERROR" && r.Fields["sequence_number"] == bad.Change.SequenceNumber
		})
	})

	t.Run("unreadable image skipped", func(t *testing.T) {
		img := streamImage(t, items["u2"])
		img["sk"] = events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{"x": events.NewStringAttribute("m#")})
		rec := expiry(t, items["u2"], "9a1c0c3e-0004", "300000000000000000001", arn)
		rec.Change.OldImage = img
		assert.Empty(t, failures(send(events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}})), "unreadable image reported as failure; it can never succeed and would block the shard")
		p, _ := stats("u2")
		assert.Equal(t, 1.0, p, "u2 published")
		consumer.WaitRecord(t, "the skipped image", func(r LogRecord) bool {
			return r.Fields["msg"] == "skipping unreadable stream image" && r.Fields["event_id"] == "9a1c0c3e-0004"
		})
	})

	t.Run("undecodable event", func(t *testing.T) {
		raw := json.RawMessage(`{"Records":[{"eventID":"x","eventName":"REMOVE","dynamodb":{"OldImage":{"pk":{"S":5}}}}]}`)
		status, out := send(raw)
		var fe struct {
			ErrorMessage string `json:"errorMessage"`
			ErrorType    string `json:"errorType"`
		}
		require.NoError(t, json.Unmarshal(out, &fe), "undecodable event: %d %s, want a function error", status, out)
		require.NotEmpty(t, fe.ErrorMessage, "undecodable event: %d %s, want a function error", status, out)
		consumer.WaitRecord(t, "the invocation error at ERROR", func(r LogRecord) bool {
			msg, _ := r.Fields["msg"].(string)
			return r.Fields["level"] == "ERROR" && strings.Contains(msg, fe.ErrorMessage)
		})
		// The function is still up for the next batch.
		assert.Empty(t, failures(send(events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{}})), "empty batch after an error")

	})
	checkLogs(t, consumer)
	checkLogs(t, api)
}
