package rezagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/localqueue"
	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/processor"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/publisher"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testToken = "tk_pipeline_test"

// pipeline is rez_agent's whole system on loopback: the functions built by
// their real constructors from the dev template's environment, DynamoDB
// Local, an SNS fake speaking SNS's query protocol, the emulated queue and
// event source mapping of the template, and an ntfy server.
type pipeline struct {
	api       http.Handler
	scheduler fn.Job
	processor fn.QueueConsumer
	sns       *awsloop.SNS
	topic     string
	queue     *localqueue.Queue
	dlq       *localqueue.Queue
	sink      *ntfysink.Sink
	client    *dynamodb.Client
	table     string
}

type pipelineOptions struct {
	visibility time.Duration // default 1.5 s: five times the ntfy timeout, as the template's 180 s is six times the function's 30 s, so a slow DynamoDB Local on a loaded machine does not make a record visible again while it is handled
	env        map[string]string
	noMapping  bool         // deliver by calling the processor directly
	log        *slog.Logger // every function's logger (default: discarded unless -v)
}

func newPipeline(t *testing.T, o pipelineOptions) *pipeline {
	t.Helper()
	ctx := context.Background()
	tmpl, names := testenv.Tables(t, testenv.Template(t, "dev", "rezagent"))
	p := &pipeline{client: testenv.Client(t)}
	for _, n := range names {
		p.table = n
	}
	var log *slog.Logger
	if !testing.Verbose() {
		log = slog.New(slog.DiscardHandler)
		slog.SetDefault(log)
	}
	if o.log != nil {
		prev := slog.Default()
		log = o.log
		slog.SetDefault(log)
		t.Cleanup(func() { slog.SetDefault(prev) })
	}
	p.sink = ntfysink.New(testToken, nil)
	ntfy := httptest.NewServer(p.sink)
	t.Cleanup(ntfy.Close)
	p.sns = awsloop.NewSNS()
	require.NoError(t, p.sns.Start())
	t.Cleanup(func() { p.sns.Close() })

	queues, err := tmpl.Queues()
	require.NoError(t, err)
	subs, err := tmpl.QueueSubscriptions()
	require.NoError(t, err)
	require.Len(t, subs, 1, "want one raw SQS subscription in the template: %v", subs)
	require.True(t, subs[0].Raw, "want one raw SQS subscription in the template: %v", subs)
	if o.visibility == 0 {
		o.visibility = 1500 * time.Millisecond
	}
	qdef := queues[subs[0].Queue]
	p.dlq = localqueue.NewQueue(qdef.DeadLetterQueue, time.Minute)
	p.queue = localqueue.NewQueue(qdef.LogicalID, o.visibility)
	p.queue.MaxReceiveCount, p.queue.DLQ = qdef.MaxReceiveCount, p.dlq
	p.topic = cfntables.LocalARN("sns", subs[0].Topic)
	p.sns.AddTopic(p.topic, func(pub awsloop.Publication) { p.queue.Send(pub.Message, pub.Attributes) })

	getenv := func(service string) func(string) string {
		env := testenv.ServiceEnv(t, tmpl, names, service)
		env["AWS_ENDPOINT_URL_SNS"] = p.sns.URL()
		env[contract.EnvNtfyURL] = ntfy.URL
		env[contract.EnvNtfyToken] = testToken
		env[contract.EnvNtfyTimeout] = "300ms"
		for k, v := range o.env {
			env[k] = v
		}
		return testenv.Getenv(t, env)
	}
	// Each function's requests are recorded as its own (testenv.Main).
	apiEnv, schedEnv, procEnv := getenv("rezagent"), getenv("rezagent-scheduler"), getenv("rezagent-processor")
	h, err := publisher.NewAPI(ctx, apiEnv, ddbrecord.ClientOptions(apiEnv)...)
	require.NoError(t, err)
	p.api = h
	p.scheduler, err = publisher.NewScheduler(ctx, schedEnv, ddbrecord.ClientOptions(schedEnv)...)
	require.NoError(t, err)
	p.processor, err = processor.New(ctx, procEnv, ddbrecord.ClientOptions(procEnv)...)
	require.NoError(t, err)
	if !o.noMapping {
		var mapping *cfntables.QueueMapping
		ms, err := tmpl.QueueMappings()
		require.NoError(t, err)
		for i := range ms {
			if ms[i].Queue == qdef.LogicalID {
				mapping = &ms[i]
			}
		}
		require.NotNil(t, mapping, "template maps no function to %s: %+v", qdef.LogicalID, ms)
		require.True(t, mapping.ReportBatchItemFailures, "template maps %s without ReportBatchItemFailures: %+v", qdef.LogicalID, ms)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		m := &localqueue.Mapping{Queue: p.queue, Handler: p.processor.Handle, BatchSize: mapping.BatchSize,
			MaxConcurrency: mapping.MaxConcurrency, Timeout: tmpl.Timeout(mapping.Function), Logger: log}
		go func() { m.Run(runCtx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	return p
}

func (p *pipeline) get(t *testing.T, id string) rezagent.Message {
	t.Helper()
	out, err := p.client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(p.table),
		Key: map[string]dynamodbtypesAV{"message_id": avS(id)}, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	var m rezagent.Message
	require.NoError(t, attributevalue.UnmarshalMap(out.Item, &m))
	return m
}

// await polls until the message reaches a final status.
func (p *pipeline) await(t *testing.T, id string) rezagent.Message {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		m := p.get(t, id)
		if m.Status == rezagent.StatusCompleted || m.Status == rezagent.StatusFailed {
			return m
		}
		require.False(t, time.Now().After(deadline), "message %s still %q after 15 s (queue %d, dlq %d, ntfy requests %d)",
			id, m.Status, p.queue.Len(), p.dlq.Len(), p.sink.Requests())
		time.Sleep(20 * time.Millisecond)
	}
}

func fire(at time.Time) fn.ScheduleEvent {
	return fn.ScheduleEvent{ScheduleARN: "arn:aws:scheduler:us-east-1:000000000000:schedule/default/rezagent-dev", ScheduledTime: at, ExecutionID: "exec-1", AttemptNumber: 1}
}

func TestScheduledRunIsDelivered(t *testing.T) {
	p := newPipeline(t, pipelineOptions{})
	at := time.Now().UTC().Truncate(time.Minute)
	require.NoError(t, p.scheduler.Run(context.Background(), fire(at)))
	id := rezagent.ScheduledMessageID(fire(at).ScheduleARN, at)
	m := p.await(t, id)
	got := p.sink.Notifications()
	require.Equal(t, rezagent.StatusCompleted, m.Status, "message %+v", m.Summary)
	require.Len(t, got, 1, "notifications")
	require.Equal(t, got[0].ID, m.NotificationID, "message's notification id")
	n := got[0]
	// The request exactly as ntfy's JSON publishing documents it.
	assert.Equal(t, "rez-agent-dev", n.Topic, "ntfy request: topic")
	assert.Equal(t, "hello world", n.Message, "ntfy request: message")
	assert.Equal(t, 3, n.Priority, "ntfy request: priority")
	assert.Equal(t, []string{"scheduled", "daily"}, n.Tags, "ntfy request: tags")
	assert.Empty(t, n.Title, "ntfy request: title")
	assert.Empty(t, n.Click, "ntfy request: click")
	assert.Equal(t, "Bearer "+testToken, n.Authorization, "ntfy request: authorization")
	assert.Equal(t, "application/json", n.ContentType, "ntfy request: content type")

	assert.Equal(t, "scheduler", m.CreatedBy, "message: created_by")
	assert.Equal(t, "scheduled_hello", m.MessageType, "message: type")
	assert.Equal(t, 0, m.RetryCount, "message: retry_count")
	assert.NotEmpty(t, m.ProcessingStartedAt, "message: processing_started_at")
	assert.GreaterOrEqual(t, m.ProcessingCompletedAt, m.ProcessingStartedAt, "message: processing_completed_at")
	assert.Empty(t, m.LeaseToken, "message: lease token")
	assert.Zero(t, m.LeaseUntil, "message: lease_until")
	if sent := p.sns.CallsOf("Publish"); assert.Len(t, sent, 1, "SNS publishes") {
		assert.Equal(t, p.topic, sent[0].Get("TopicArn"), "SNS publish: TopicArn")
		assert.Equal(t, `{"message_id":"`+id+`"}`, sent[0].Get("Message"), "SNS publish: Message")
	}
}

// A fire retried by Scheduler and Lambda, sequentially and at once, makes
// one message and one notification.
func TestSchedulerRetriedForOneFireTime(t *testing.T) {
	p := newPipeline(t, pipelineOptions{})
	at := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ev := fire(at)
			ev.AttemptNumber, ev.ExecutionID = i+1, fmt.Sprintf("exec-%d", i)
			errs <- p.scheduler.Run(context.Background(), ev)
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	id := rezagent.ScheduledMessageID(fire(at).ScheduleARN, at)
	p.await(t, id)
	// A late retry.
	require.NoError(t, p.scheduler.Run(context.Background(), fire(at)))
	time.Sleep(300 * time.Millisecond) // room for a second delivery to show
	out, err := p.client.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(p.table), IndexName: aws.String("stage-created_date-index"),
		KeyConditionExpression: aws.String("stage = :s"), ExpressionAttributeValues: map[string]dynamodbtypesAV{":s": avS("dev")}})
	require.NoError(t, err)
	assert.Equal(t, int32(1), out.Count, "messages")
	assert.Len(t, p.sink.Notifications(), 1, "notifications")
}

func TestAPICreateIsPublishedAndDelivered(t *testing.T) {
	p := newPipeline(t, pipelineOptions{})
	r := apitest.Do(t, p.api, contract.CreateMessage.Method, contract.CreateMessage.URL(), `{"message_type":"manual_notification","created_by":"user:a@example.com",
		"payload":{"text":"Deploy done","title":"CI","priority":"high","tags":["manual"],"click_url":"https://example.com/run/1"}}`)
	require.Equal(t, http.StatusCreated, r.Status, "create: %s", r.Body)
	var created rezagent.Message
	require.NoError(t, json.Unmarshal([]byte(r.Body), &created))
	assert.NotEqual(t, rezagent.StatusCreated, created.Status, "create answered status created: the publish did not happen in the request")
	m := p.await(t, created.MessageID)
	got := p.sink.Notifications()
	require.Equal(t, rezagent.StatusCompleted, m.Status, "message %+v", m.Summary)
	require.Len(t, got, 1, "notifications")
	n := got[0]
	assert.Equal(t, "Deploy done", n.Message, "ntfy request: message")
	assert.Equal(t, "CI", n.Title, "ntfy request: title")
	assert.Equal(t, 4, n.Priority, "ntfy request: priority")
	assert.Equal(t, "https://example.com/run/1", n.Click, "ntfy request: click")
	assert.Equal(t, []string{"manual"}, n.Tags, "ntfy request: tags")
}

// A publish that fails leaves the message created; the next scheduler run
// republishes it once it is older than the threshold.
func TestStrandedMessageIsRepublished(t *testing.T) {
	const after = 2 * time.Second
	p := newPipeline(t, pipelineOptions{env: map[string]string{contract.EnvRepublishAfter: after.String()}})
	p.sns.FailNext(p.topic, 100) // outlasts the SDK's retries of the create's publish
	r := apitest.Do(t, p.api, contract.CreateMessage.Method, contract.CreateMessage.URL(), `{"message_type":"manual_notification","created_by":"user:a@example.com","payload":{"text":"later"}}`)
	require.Equal(t, http.StatusCreated, r.Status, "create with SNS down: %s (the message is stored; the failure is not the caller's)", r.Body)
	var created rezagent.Message
	_ = json.Unmarshal([]byte(r.Body), &created)
	require.Equal(t, rezagent.StatusCreated, created.Status, "status: want created and nothing queued")
	require.Equal(t, 0, p.queue.Len(), "queue: want created and nothing queued")
	p.sns.FailNext(p.topic, 0)
	createdAt, err := time.Parse("2006-01-02T15:04:05.000000Z", created.CreatedDate)
	require.NoError(t, err)
	// Too young: a scheduler run leaves it alone (checked while it is
	// surely younger than the threshold; the SDK's retries of the failing
	// publish can take a while on a loaded machine).
	if time.Since(createdAt) < after/2 {
		n, err := p.scheduler.(*rezagent.Scheduler).Republish(context.Background())
		require.NoError(t, err, "young message republished")
		require.Equal(t, 0, n, "young message republished")
	}
	time.Sleep(time.Until(createdAt.Add(after + 100*time.Millisecond)))
	require.NoError(t, p.scheduler.Run(context.Background(), fire(time.Now().UTC().Truncate(time.Second))))
	require.Equal(t, rezagent.StatusCompleted, p.await(t, created.MessageID).Status, "stranded message ended")
}

// ntfy failing (5xx, 429, a hang past the client timeout) is retried by
// SQS; the last receive marks the message failed with the error.
func TestDeliveryRetriesThenFails(t *testing.T) {
	for _, tc := range []struct {
		name      string
		faults    []ntfysink.Fault
		status    rezagent.Status
		retries   int
		errorLike string
		outcome   string // the Deliveries outcome of the last attempt
	}{
		{"recovers after 5xx, 429 and a hang", []ntfysink.Fault{{Status: 503}, {Status: 429}, {Delay: time.Second}}, rezagent.StatusCompleted, 3, "", contract.OutcomeDelivered},
		{"fails on the last attempt", []ntfysink.Fault{{Status: 500}, {Status: 429}, {Delay: time.Second}, {Status: 502}, {Status: 500}}, rezagent.StatusFailed, 4, "ntfy: HTTP 500", contract.OutcomeFailedForGood},
		{"a permanent 4xx fails at once", []ntfysink.Fault{{Status: 400}}, rezagent.StatusFailed, 0, "ntfy: HTTP 400", contract.OutcomeFailedForGood},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncBuffer
			p := newPipeline(t, pipelineOptions{log: logx.New(&buf, slog.LevelInfo).With(svc.MetricDimension, contract.Processor.Name)})
			p.sink.FailNext(tc.faults...)
			at := time.Now().UTC().Truncate(time.Minute)
			require.NoError(t, p.scheduler.Run(context.Background(), fire(at)))
			m := p.await(t, rezagent.ScheduledMessageID(fire(at).ScheduleARN, at))
			require.Equal(t, tc.status, m.Status, "status")
			require.Equal(t, tc.retries, m.RetryCount, "retry_count")
			require.Contains(t, m.ErrorMessage, tc.errorLike, "error message")
			wantSent := 0
			if tc.status == rezagent.StatusCompleted {
				wantSent = 1
			}
			assert.Len(t, p.sink.Notifications(), wantSent, "notifications")
			time.Sleep(200 * time.Millisecond)
			assert.Equal(t, 0, p.queue.Len(), "queue: a finished message left records behind")
			assert.Equal(t, 0, p.dlq.Len(), "dlq: a finished message left records behind")
			// Deliveries: one per attempt, by type and outcome (EMF lines).
			deliveries := func(outcome string) float64 {
				return metrics.Sum(metrics.Find(buf.measurements(t), contract.Deliveries.Name, map[string]string{
					svc.MetricDimension: contract.Processor.Name, contract.DimType: contract.TypeScheduledHello, contract.DimOutcome: outcome}))
			}
			assert.Eventually(t, func() bool { return deliveries(tc.outcome) == 1 }, 5*time.Second, 10*time.Millisecond, "one %s delivery", tc.outcome)
			assert.Equal(t, float64(tc.retries), deliveries(contract.OutcomeRetried), "retried deliveries")
		})
	}
}

func record(id, body string, receives int) events.SQSMessage {
	return events.SQSMessage{MessageId: id, ReceiptHandle: "h-" + id, Body: body, EventSource: "aws:sqs",
		Attributes: map[string]string{"ApproximateReceiveCount": fmt.Sprint(receives)}}
}

// The same record delivered twice (in one batch, then again) and twenty
// deliveries of one message at once: one notification.
func TestDuplicateDeliveriesNotifyOnce(t *testing.T) {
	p := newPipeline(t, pipelineOptions{noMapping: true})
	ctx := context.Background()
	create := func(text string) string {
		r := apitest.Do(t, p.api, contract.CreateMessage.Method, contract.CreateMessage.URL(), `{"message_type":"manual_notification","created_by":"user:a@example.com","payload":{"text":"`+text+`"}}`)
		var m rezagent.Message
		require.Equal(t, http.StatusCreated, r.Status, "create: %s", r.Body)
		require.NoError(t, json.Unmarshal([]byte(r.Body), &m), "create: %s", r.Body)
		return m.MessageID
	}
	id := create("twice")
	body := `{"message_id":"` + id + `"}`
	// One copy delivers; the other finds the lease of its own message id
	// and asks for a retry rather than guess the outcome.
	resp, err := p.processor.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{record("r1", body, 1), record("r1", body, 1)}})
	require.NoError(t, err, "batch")
	require.LessOrEqual(t, len(resp.BatchItemFailures), 1, "batch: %+v", resp)
	resp, err = p.processor.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{record("r1", body, 2)}})
	require.NoError(t, err, "redelivery")
	require.Empty(t, resp.BatchItemFailures, "redelivery: %+v", resp)
	require.Len(t, p.sink.Notifications(), 1, "notifications for one message delivered three times")

	id = create("twenty")
	body = `{"message_id":"` + id + `"}`
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			resp, err := p.processor.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{record(fmt.Sprintf("c%d", i), body, 1)}})
			assert.NoError(t, err, "delivery %d", i)
			assert.Empty(t, resp.BatchItemFailures, "delivery %d: %+v", i, resp)
		}(i)
	}
	close(start)
	wg.Wait()
	var sent int
	for _, n := range p.sink.Notifications() {
		if n.Message == "twenty" {
			sent++
		}
	}
	m := p.get(t, id)
	assert.Equal(t, 1, sent, "notifications")
	assert.Equal(t, rezagent.StatusCompleted, m.Status, "message status")
	assert.Equal(t, 0, m.RetryCount, "message retry_count")
}

// Poison records fail alone and reach the dead-letter queue after the
// redrive maximum; the rest of their batch is delivered.
func TestPoisonRecords(t *testing.T) {
	p := newPipeline(t, pipelineOptions{noMapping: true})
	r := apitest.Do(t, p.api, contract.CreateMessage.Method, contract.CreateMessage.URL(), `{"message_type":"manual_notification","created_by":"user:a@example.com","payload":{"text":"good"}}`)
	var good rezagent.Message
	_ = json.Unmarshal([]byte(r.Body), &good)
	batch := []events.SQSMessage{
		record("not-json", "hello", 1),
		record("wrong-shape", `{"id":"x"}`, 1),
		record("bad-id", `{"message_id":"NOT-A-UUID"}`, 1),
		record("unknown", `{"message_id":"00000000-0000-4000-8000-000000000000"}`, 1),
		record("trailing", `{"message_id":"`+good.MessageID+`"} {}`, 1),
		record("good", `{"message_id":"`+good.MessageID+`"}`, 1),
	}
	resp, err := p.processor.Handle(context.Background(), events.SQSEvent{Records: batch})
	require.NoError(t, err)
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	require.Equal(t, []string{"not-json", "wrong-shape", "bad-id", "unknown", "trailing"}, failed, "failed records")
	require.Equal(t, rezagent.StatusCompleted, p.get(t, good.MessageID).Status, "good record of the batch")

	// Through the emulated mapping: the poison record reaches the DLQ.
	q := newPipeline(t, pipelineOptions{})
	q.queue.Send("not json at all", nil)
	assert.Eventually(t, func() bool { return q.dlq.Len() != 0 }, 10*time.Second, 20*time.Millisecond, "the poison record reaches the DLQ")
	require.Equal(t, []string{"not json at all"}, q.dlq.Bodies(), "dlq")
	require.Equal(t, 0, q.queue.Len(), "queue")
}

// The token comes from an SSM SecureString through SSM's real protocol.
func TestNtfyTokenFromSSM(t *testing.T) {
	ssm := awsloop.NewSSM()
	require.NoError(t, ssm.Start())
	defer ssm.Close()
	ssm.PutSecureString("/rez-agent/dev/ntfy-token", testToken)
	p := newPipeline(t, pipelineOptions{env: map[string]string{
		contract.EnvNtfyToken: "", contract.EnvNtfyTokenParameter: "/rez-agent/dev/ntfy-token", "AWS_ENDPOINT_URL_SSM": ssm.URL()}})
	at := time.Now().UTC().Truncate(time.Minute)
	require.NoError(t, p.scheduler.Run(context.Background(), fire(at)))
	m := p.await(t, rezagent.ScheduledMessageID(fire(at).ScheduleARN, at))
	require.Equal(t, rezagent.StatusCompleted, m.Status, "status (%s)", m.ErrorMessage)
	calls := ssm.CallsOf("GetParameter")
	var in struct {
		Name           string
		WithDecryption bool
	}
	require.Len(t, calls, 1, "SSM GetParameter calls")
	require.NoError(t, calls[0].Decode(&in), "SSM call %+v", calls[0])
	require.Equal(t, "/rez-agent/dev/ntfy-token", in.Name, "SSM call: Name")
	require.True(t, in.WithDecryption, "SSM call: WithDecryption")
}

type dynamodbtypesAV = types.AttributeValue

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
