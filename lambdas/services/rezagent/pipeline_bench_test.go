package rezagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/ntfy"
)

// BenchmarkProcessor delivers batches of 1 and 10 messages through the
// processor (claim, ntfy publish, finish) against DynamoDB Local and the
// local ntfy sink, and, interleaved batch by batch so that load on the
// machine falls on both alike, makes the same DynamoDB and HTTP calls with
// the raw SDK and http.Client at the same parallelism. It reports both
// times per message, their ratio (the processor's overhead), messages per
// second, and DynamoDB requests per delivered message (the design's minimum
// is 2: the claim, which must precede the publish to make concurrent
// deliveries notify once, and the outcome).
func BenchmarkProcessor(b *testing.B) {
	for _, batch := range []int{1, 10} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			f := newBenchFixture(b)
			meter, direct := &ddbrecord.Recorder{}, &ddbrecord.Recorder{}
			proc := rezagent.NewProcessorFromConfig(rezagent.ProcessorConfig{
				Config:    rezagent.Config{Table: f.table, Stage: "dev", Common: fn.Common{Client: meter.Client(testenv.Client(b)), Logger: slog.New(slog.DiscardHandler)}},
				Ntfy:      &ntfy.Client{Server: f.sink.URL, HTTP: f.http},
				NtfyTopic: "rez-agent-dev", MaxReceiveCount: 5,
			})
			client := direct.Client(testenv.Client(b))
			viaProcessor := func(tag string, ids []string) {
				ev := events.SQSEvent{}
				for j, id := range ids {
					ev.Records = append(ev.Records, record(fmt.Sprintf("%s-%d", tag, j), `{"message_id":"`+id+`"}`, 1))
				}
				resp, err := proc.Handle(context.Background(), ev)
				// Timed: the assertions only on the failure path.
				if err != nil || len(resp.BatchItemFailures) != 0 {
					require.NoError(b, err, "batch %s", tag)
					require.Empty(b, resp.BatchItemFailures, "batch %s: failures", tag)
				}
			}
			viaDirect := func(ids []string) {
				var wg sync.WaitGroup
				for _, id := range ids {
					wg.Add(1)
					go func() {
						defer wg.Done()
						f.direct(b, client, id)
					}()
				}
				wg.Wait()
			}
			// Warm DynamoDB Local's JIT on both paths first.
			warm := f.messages(b, 2*warmup)
			for i := 0; i < warmup; i += batch {
				viaProcessor(fmt.Sprintf("w%d", i), warm[i:i+batch])
				viaDirect(warm[warmup+i : warmup+i+batch])
			}
			ids := f.messages(b, 2*b.N*batch)
			meter.Reset()
			direct.Reset()
			var tp, td time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				mine := ids[2*i*batch : (2*i+1)*batch]
				theirs := ids[(2*i+1)*batch : (2*i+2)*batch]
				t0 := time.Now()
				viaProcessor(fmt.Sprintf("r%d", i), mine)
				t1 := time.Now()
				viaDirect(theirs)
				td += time.Since(t1)
				tp += t1.Sub(t0)
			}
			b.StopTimer()
			msgs := float64(b.N * batch)
			// Accepted, not Notifications: the sink keeps only the newest
			// ntfysink.Keep, fewer than a long run sends.
			require.Equal(b, 2*b.N*batch, f.got.Accepted()-2*warmup, "notifications: one for each message")
			b.ReportMetric(float64(tp.Nanoseconds())/msgs, "processor-ns/msg")
			b.ReportMetric(float64(td.Nanoseconds())/msgs, "direct-ns/msg")
			b.ReportMetric(float64(tp)/float64(td), "ratio")
			b.ReportMetric(msgs/tp.Seconds(), "msgs/s")
			b.ReportMetric(float64(meter.Requests())/msgs, "ddb-req/msg")
			b.ReportMetric(float64(direct.Requests())/msgs, "direct-ddb-req/msg")
		})
	}
}

// warmup is how many messages each benchmark delivers before timing.
const warmup = 200

type benchFixture struct {
	table string
	sink  *httptest.Server
	got   *ntfysink.Sink
	http  *http.Client
	api   http.Handler
}

func newBenchFixture(b *testing.B) *benchFixture {
	_, names := testenv.Tables(b, testenv.Template(b, "dev", "rezagent"))
	f := &benchFixture{http: &http.Client{}}
	for _, n := range names {
		f.table = n
	}
	f.got = ntfysink.New("", nil)
	f.sink = httptest.NewServer(f.got)
	b.Cleanup(f.sink.Close)
	f.api = rezagent.NewHandler(rezagent.Config{Table: f.table, Stage: "dev", Common: fn.Common{Client: testenv.Client(b), Logger: slog.New(slog.DiscardHandler)}})
	return f
}

// messages creates n messages (outside the timer).
func (f *benchFixture) messages(b *testing.B, n int) []string {
	b.Helper()
	ids := make([]string, n)
	for i := range ids {
		r := httptest.NewRecorder()
		req := httptest.NewRequest(contract.CreateMessage.Method, contract.CreateMessage.URL(), bytes.NewReader([]byte(`{"message_type":"scheduled_hello","created_by":"scheduler","payload":{"text":"hello world","priority":"default","tags":["scheduled","daily"]}}`)))
		f.api.ServeHTTP(r, req)
		var m struct {
			MessageID string `json:"message_id"`
		}
		require.Equal(b, http.StatusCreated, r.Code, "create: status (body %s)", r.Body)
		require.NoError(b, json.Unmarshal(r.Body.Bytes(), &m), "create: body %s", r.Body)
		ids[i] = m.MessageID
	}
	return ids
}

// direct is the processor's calls for one message, written out. It runs
// on its own goroutine (assert, never require) and is timed: its
// assertions run only on the failure path.
func (f *benchFixture) direct(b *testing.B, client *dynamodb.Client, id string) {
	ctx := context.Background()
	now := time.Now().UTC()
	ts := rezagent.Timestamp(now)
	key := map[string]types.AttributeValue{"message_id": &types.AttributeValueMemberS{Value: id}}
	out, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(f.table), Key: key,
		UpdateExpression:         aws.String("SET #s = :p, updated_date = :ts, processing_started_at = :ts, lease_token = :tok, lease_until = :lu"),
		ConditionExpression:      aws.String("attribute_exists(message_id) AND #s IN (:c, :q) AND (attribute_not_exists(#ttl) OR #ttl > :now)"),
		ExpressionAttributeNames: map[string]string{"#s": "status", "#ttl": "ttl"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": &types.AttributeValueMemberS{Value: "processing"}, ":c": &types.AttributeValueMemberS{Value: "created"},
			":q": &types.AttributeValueMemberS{Value: "queued"}, ":ts": &types.AttributeValueMemberS{Value: ts},
			":tok": &types.AttributeValueMemberS{Value: id + "/1"}, ":lu": &types.AttributeValueMemberN{Value: fmt.Sprint(now.Add(30 * time.Second).UnixMilli())},
			":now": &types.AttributeValueMemberN{Value: fmt.Sprint(now.Unix())},
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		assert.NoError(b, err, "claim %s", id)
		return
	}
	payload := out.Attributes["payload"].(*types.AttributeValueMemberM).Value
	var tags []string
	for _, t := range payload["tags"].(*types.AttributeValueMemberL).Value {
		tags = append(tags, t.(*types.AttributeValueMemberS).Value)
	}
	body, _ := json.Marshal(map[string]any{"topic": "rez-agent-dev", "message": payload["text"].(*types.AttributeValueMemberS).Value, "priority": 3, "tags": tags})
	resp, err := f.http.Post(f.sink.URL+"/", "application/json", bytes.NewReader(body))
	if err != nil {
		assert.NoError(b, err, "publish %s", id)
		return
	}
	var pub struct {
		ID string `json:"id"`
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(raw, &pub); err != nil || pub.ID == "" {
		if assert.NoError(b, err, "ntfy answer %s", raw) {
			assert.NotEmpty(b, pub.ID, "ntfy answer %s: id", raw)
		}
		return
	}
	_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(f.table), Key: key,
		UpdateExpression:         aws.String("SET #s = :done, updated_date = :ts, processing_completed_at = :ts, notification_id = :nid REMOVE lease_token, lease_until"),
		ConditionExpression:      aws.String("attribute_exists(message_id) AND #s = :p AND lease_token = :tok AND (attribute_not_exists(#ttl) OR #ttl > :now)"),
		ExpressionAttributeNames: map[string]string{"#s": "status", "#ttl": "ttl"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":done": &types.AttributeValueMemberS{Value: "completed"}, ":p": &types.AttributeValueMemberS{Value: "processing"},
			":ts": &types.AttributeValueMemberS{Value: rezagent.Timestamp(time.Now())}, ":nid": &types.AttributeValueMemberS{Value: pub.ID},
			":tok": &types.AttributeValueMemberS{Value: id + "/1"}, ":now": &types.AttributeValueMemberN{Value: fmt.Sprint(now.Unix())},
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		assert.NoError(b, err, "finish %s", id)
	}
}
