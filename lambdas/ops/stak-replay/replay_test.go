package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/poller"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services/stak"
	"github.com/dynastack/dynastack/lambdas/services/stak/stakapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestReplay: the consumer fails every record of a batch of real TTL
// expiries (as when DynamoDB refused its writes for a day); from nothing but
// the on-failure message Lambda would send, the replay applies them, and a
// second replay changes nothing.
func TestReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for DynamoDB Local's TTL sweep")
	}
	ctx := context.Background()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "stak"))
	table := names["InboxA8E05DC3"]
	cfg, err := stak.ConfigFromEnv(func(k string) string { return map[string]string{stakcontract.EnvTable: table}[k] })
	require.NoError(t, err)
	client := testenv.Client(t)
	cfg.Client = client
	cfg.Logger = slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		cfg.Logger = slog.Default()
	}
	h := stakapi.NewHandler(cfg)
	consumer := stak.NewConsumerFromConfig(cfg)
	do := func(method, path, body string, status int) string {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if parts := strings.Split(path, "/"); len(parts) > 6 && parts[5] == "users" {
			req = req.WithContext(api.WithCaller(req.Context(), api.Caller{Subject: parts[6], Claims: map[string]string{"sub": parts[6], "tenant": parts[2]}}))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		require.Equal(t, status, w.Code, "%s %s: status (body %s)", method, path, w.Body)
		return w.Body.String()
	}
	published := func(uid string) string {
		var st stak.Stats
		require.NoError(t, json.Unmarshal([]byte(do(stakcontract.Stats.Method, stakcontract.Stats.URL("acme", "main", uid), "", 200)), &st))
		return fmt.Sprintf("%d/%d", st.Published, st.Read)
	}

	streams := poller.Streams(client)
	arn, err := poller.StreamARN(ctx, client, table)
	require.NoError(t, err)
	// The consumer that fails: every record it is given is reported failed,
	// and what it saw is what Lambda's batch info would describe.
	var seen []events.DynamoDBEventRecord
	seq := map[string]bool{}
	failing := func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		resp := events.DynamoDBEventResponse{}
		for _, r := range ev.Records {
			if !seq[r.Change.SequenceNumber] {
				seq[r.Change.SequenceNumber] = true
				seen = append(seen, r)
			}
		}
		resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: ev.Records[0].Change.SequenceNumber}}
		return resp, nil
	}
	p, err := poller.New(poller.Config{Client: streams, StreamARN: arn, Handler: failing, Start: poller.Latest, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.NoError(t, p.Sync(ctx))

	do(stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), `{"title":"Acme"}`, 200)
	do(stakcontract.PutInbox.Method, stakcontract.PutInbox.URL("acme", "main"), `{"title":"Main","ttl":{"default":"3s"}}`, 200)
	// A categorised message: its counters by category are replayed too.
	// (The stream is read through poller.Streams, which mends DynamoDB
	// Local's empty maps; the tool itself, pointed at DynamoDB Local, would
	// misread an uncategorised message's taxonomy: docs/schemas/stak.md.)
	var pub stak.Published
	require.NoError(t, json.Unmarshal([]byte(do(stakcontract.Publish.Method, stakcontract.Publish.URL("acme", "main"), `{"sender":"hr","audiences":{"kind":"users","uids":["u1","u2"]},"taxonomy":{"category":"billing"},"message":{"title":"hi"}}`, 201)), &pub))
	do(stakcontract.MarkRead.Method, stakcontract.MarkRead.URL("acme", "main", "u1", pub.Header.ID), "", 200)
	require.Equal(t, "1/1 1/0", published("u1")+" "+published("u2"), "counters before expiry")

	expiries := func() int {
		n := 0
		for _, r := range seen {
			if stak.IsExpiry(r) {
				n++
			}
		}
		return n
	}
	// DynamoDB Local's TTL sweep walks every table of the shared server:
	// beside make test's other packages it took 89 s once, and more than
	// 90 s in a clean clone's CI run beside other test processes.
	deadline := time.Now().Add(150 * time.Second)
	for expiries() < 2 {
		// Not Eventually: each round polls the stream, which must not
		// run beside the next round, and an error from it ends the test.
		require.False(t, time.Now().After(deadline), "no TTL deletion of both messages after 150 s (%d records seen)", len(seen))
		_, err := p.Poll(ctx)
		require.NoError(t, err)
		time.Sleep(500 * time.Millisecond)
	}
	require.Equal(t, "1/1 1/0", published("u1")+" "+published("u2"), "the failing consumer changed counters")

	// What Lambda puts on the failure queue: the batch's place, no records.
	desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	require.NoError(t, err)
	require.NotEmpty(t, desc.StreamDescription.Shards, "shards")
	require.NotEmpty(t, seen, "records seen")
	shard := aws.ToString(desc.StreamDescription.Shards[len(desc.StreamDescription.Shards)-1].ShardId)
	msg := fmt.Sprintf(`{"requestContext":{"requestId":"r-1","functionArn":"arn:aws:lambda:us-east-1:000000000000:function:stak-stream","condition":"RetryAttemptsExhausted","approximateInvokeCount":11},
		"responseContext":{"statusCode":200,"executedVersion":"$LATEST","functionError":""},"version":"1.0","timestamp":"2026-11-26T00:00:00.000Z",
		"DDBStreamBatchInfo":{"shardId":%q,"startSequenceNumber":%q,"endSequenceNumber":%q,"approximateArrivalOfFirstRecord":"2026-11-26T00:00:00Z","approximateArrivalOfLastRecord":"2026-11-26T00:00:00Z","batchSize":%d,"streamArn":%q}}`,
		shard, seen[0].Change.SequenceNumber, seen[len(seen)-1].Change.SequenceNumber, len(seen), arn)
	failures, err := Decode(strings.NewReader(msg))
	require.NoError(t, err, "Decode")
	require.Len(t, failures, 1, "Decode")
	for round := 1; round <= 2; round++ {
		res, err := Replay(ctx, streams, consumer.Handle, failures[0].Batch)
		require.NoError(t, err, "replay %d", round)
		assert.Equal(t, len(seen), res.Records, "replay %d: records", round)
		assert.Empty(t, res.Failed, "replay %d: failed", round)
		assert.True(t, res.Complete, "replay %d: complete", round)
		assert.Equal(t, "0/0 0/0", published("u1")+" "+published("u2"), "after replay %d: counters", round)
	}

	// A message that is not Lambda's on-failure shape is refused.
	_, err = Decode(strings.NewReader(`{"Records":[]}`))
	assert.Error(t, err, "a message without DDBStreamBatchInfo was accepted")
}
