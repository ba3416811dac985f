package rezagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/localqueue"
	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/processor"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/publisher"
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
	visibility time.Duration // default 500ms: above the ntfy timeout, as the template's 180 s is above the function's 30 s
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
	if err := p.sns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.sns.Close() })

	queues, err := tmpl.Queues()
	if err != nil {
		t.Fatal(err)
	}
	subs, err := tmpl.QueueSubscriptions()
	if err != nil || len(subs) != 1 || !subs[0].Raw {
		t.Fatalf("want one raw SQS subscription in the template: %v %v", subs, err)
	}
	if o.visibility == 0 {
		o.visibility = 500 * time.Millisecond
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
	if err != nil {
		t.Fatal(err)
	}
	p.api = h
	if p.scheduler, err = publisher.NewScheduler(ctx, schedEnv, ddbrecord.ClientOptions(schedEnv)...); err != nil {
		t.Fatal(err)
	}
	if p.processor, err = processor.New(ctx, procEnv, ddbrecord.ClientOptions(procEnv)...); err != nil {
		t.Fatal(err)
	}
	if !o.noMapping {
		var mapping *cfntables.QueueMapping
		ms, err := tmpl.QueueMappings()
		if err != nil {
			t.Fatal(err)
		}
		for i := range ms {
			if ms[i].Queue == qdef.LogicalID {
				mapping = &ms[i]
			}
		}
		if mapping == nil || !mapping.ReportBatchItemFailures {
			t.Fatalf("template maps no function to %s with ReportBatchItemFailures: %+v", qdef.LogicalID, ms)
		}
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
	if err != nil {
		t.Fatal(err)
	}
	var m rezagent.Message
	if err := attributevalue.UnmarshalMap(out.Item, &m); err != nil {
		t.Fatal(err)
	}
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
		if time.Now().After(deadline) {
			t.Fatalf("message %s still %q after 15 s (queue %d, dlq %d, ntfy requests %d)", id, m.Status, p.queue.Len(), p.dlq.Len(), p.sink.Requests())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fire(at time.Time) fn.ScheduleEvent {
	return fn.ScheduleEvent{ScheduleARN: "arn:aws:scheduler:us-east-1:000000000000:schedule/default/rezagent-dev", ScheduledTime: at, ExecutionID: "exec-1", AttemptNumber: 1}
}

func TestScheduledRunIsDelivered(t *testing.T) {
	p := newPipeline(t, pipelineOptions{})
	at := time.Now().UTC().Truncate(time.Minute)
	if err := p.scheduler.Run(context.Background(), fire(at)); err != nil {
		t.Fatal(err)
	}
	id := rezagent.ScheduledMessageID(fire(at).ScheduleARN, at)
	m := p.await(t, id)
	got := p.sink.Notifications()
	if m.Status != rezagent.StatusCompleted || len(got) != 1 || m.NotificationID != got[0].ID {
		t.Fatalf("message %+v, notifications %+v", m.Summary, got)
	}
	n := got[0]
	// The request exactly as ntfy's JSON publishing documents it.
	if n.Topic != "rez-agent-dev" || n.Message != "hello world" || n.Priority != 3 || strings.Join(n.Tags, ",") != "scheduled,daily" ||
		n.Title != "" || n.Click != "" || n.Authorization != "Bearer "+testToken || n.ContentType != "application/json" {
		t.Errorf("ntfy request %+v", n)
	}
	if m.CreatedBy != "scheduler" || m.MessageType != "scheduled_hello" || m.RetryCount != 0 || m.ProcessingStartedAt == "" ||
		m.ProcessingCompletedAt < m.ProcessingStartedAt || m.LeaseToken != "" || m.LeaseUntil != 0 {
		t.Errorf("message %+v", m.Summary)
	}
	if sent := p.sns.CallsOf("Publish"); len(sent) != 1 || sent[0].Get("TopicArn") != p.topic || sent[0].Get("Message") != `{"message_id":"`+id+`"}` {
		t.Errorf("SNS calls %+v", sent)
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
		if err != nil {
			t.Fatal(err)
		}
	}
	id := rezagent.ScheduledMessageID(fire(at).ScheduleARN, at)
	p.await(t, id)
	if err := p.scheduler.Run(context.Background(), fire(at)); err != nil { // a late retry
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // room for a second delivery to show
	out, err := p.client.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(p.table), IndexName: aws.String("stage-created_date-index"),
		KeyConditionExpression: aws.String("stage = :s"), ExpressionAttributeValues: map[string]dynamodbtypesAV{":s": avS("dev")}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 1 || len(p.sink.Notifications()) != 1 {
		t.Fatalf("%d messages, %d notifications; want 1 and 1", out.Count, len(p.sink.Notifications()))
	}
}

func TestAPICreateIsPublishedAndDelivered(t *testing.T) {
	p := newPipeline(t, pipelineOptions{})
	r := apitest.Do(t, p.api, "POST", "/messages", `{"message_type":"manual_notification","created_by":"user:a@example.com",
		"payload":{"text":"Deploy done","title":"CI","priority":"high","tags":["manual"],"click_url":"https://example.com/run/1"}}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var created rezagent.Message
	if err := json.Unmarshal([]byte(r.Body), &created); err != nil {
		t.Fatal(err)
	}
	if created.Status == rezagent.StatusCreated {
		t.Errorf("create answered status created: the publish did not happen in the request")
	}
	m := p.await(t, created.MessageID)
	got := p.sink.Notifications()
	if m.Status != rezagent.StatusCompleted || len(got) != 1 {
		t.Fatalf("message %+v, notifications %+v", m.Summary, got)
	}
	if n := got[0]; n.Message != "Deploy done" || n.Title != "CI" || n.Priority != 4 || n.Click != "https://example.com/run/1" || strings.Join(n.Tags, ",") != "manual" {
		t.Errorf("ntfy request %+v", n)
	}
}

// A publish that fails leaves the message created; the next scheduler run
// republishes it once it is older than the threshold.
func TestStrandedMessageIsRepublished(t *testing.T) {
	const after = 2 * time.Second
	p := newPipeline(t, pipelineOptions{env: map[string]string{contract.EnvRepublishAfter: after.String()}})
	p.sns.FailNext(p.topic, 100) // outlasts the SDK's retries of the create's publish
	r := apitest.Do(t, p.api, "POST", "/messages", `{"message_type":"manual_notification","created_by":"user:a@example.com","payload":{"text":"later"}}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create with SNS down: %d %s (the message is stored; the failure is not the caller's)", r.Status, r.Body)
	}
	var created rezagent.Message
	_ = json.Unmarshal([]byte(r.Body), &created)
	if created.Status != rezagent.StatusCreated || p.queue.Len() != 0 {
		t.Fatalf("status %q, queue %d; want created and nothing queued", created.Status, p.queue.Len())
	}
	p.sns.FailNext(p.topic, 0)
	createdAt, err := time.Parse("2006-01-02T15:04:05.000000Z", created.CreatedDate)
	if err != nil {
		t.Fatal(err)
	}
	// Too young: a scheduler run leaves it alone (checked while it is
	// surely younger than the threshold; the SDK's retries of the failing
	// publish can take a while on a loaded machine).
	if time.Since(createdAt) < after/2 {
		if n, err := p.scheduler.(*rezagent.Scheduler).Republish(context.Background()); err != nil || n != 0 {
			t.Fatalf("young message republished: %d %v", n, err)
		}
	}
	time.Sleep(time.Until(createdAt.Add(after + 100*time.Millisecond)))
	if err := p.scheduler.Run(context.Background(), fire(time.Now().UTC().Truncate(time.Second))); err != nil {
		t.Fatal(err)
	}
	if m := p.await(t, created.MessageID); m.Status != rezagent.StatusCompleted {
		t.Fatalf("stranded message ended %q", m.Status)
	}
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
	}{
		{"recovers after 5xx, 429 and a hang", []ntfysink.Fault{{Status: 503}, {Status: 429}, {Delay: time.Second}}, rezagent.StatusCompleted, 3, ""},
		{"fails on the last attempt", []ntfysink.Fault{{Status: 500}, {Status: 429}, {Delay: time.Second}, {Status: 502}, {Status: 500}}, rezagent.StatusFailed, 4, "ntfy: HTTP 500"},
		{"a permanent 4xx fails at once", []ntfysink.Fault{{Status: 400}}, rezagent.StatusFailed, 0, "ntfy: HTTP 400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPipeline(t, pipelineOptions{})
			p.sink.FailNext(tc.faults...)
			at := time.Now().UTC().Truncate(time.Minute)
			if err := p.scheduler.Run(context.Background(), fire(at)); err != nil {
				t.Fatal(err)
			}
			m := p.await(t, rezagent.ScheduledMessageID(fire(at).ScheduleARN, at))
			if m.Status != tc.status || m.RetryCount != tc.retries || !strings.Contains(m.ErrorMessage, tc.errorLike) {
				t.Fatalf("status %q retry_count %d error %q; want %q, %d, %q", m.Status, m.RetryCount, m.ErrorMessage, tc.status, tc.retries, tc.errorLike)
			}
			wantSent := 0
			if tc.status == rezagent.StatusCompleted {
				wantSent = 1
			}
			if got := len(p.sink.Notifications()); got != wantSent {
				t.Errorf("%d notifications, want %d", got, wantSent)
			}
			time.Sleep(200 * time.Millisecond)
			if p.queue.Len() != 0 || p.dlq.Len() != 0 {
				t.Errorf("queue %d, dlq %d: a finished message left records behind", p.queue.Len(), p.dlq.Len())
			}
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
		r := apitest.Do(t, p.api, "POST", "/messages", `{"message_type":"manual_notification","created_by":"user:a@example.com","payload":{"text":"`+text+`"}}`)
		var m rezagent.Message
		if err := json.Unmarshal([]byte(r.Body), &m); err != nil || r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		return m.MessageID
	}
	id := create("twice")
	body := `{"message_id":"` + id + `"}`
	// One copy delivers; the other finds the lease of its own message id
	// and asks for a retry rather than guess the outcome.
	resp, err := p.processor.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{record("r1", body, 1), record("r1", body, 1)}})
	if err != nil || len(resp.BatchItemFailures) > 1 {
		t.Fatalf("batch: %+v %v", resp, err)
	}
	if resp, err = p.processor.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{record("r1", body, 2)}}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("redelivery: %+v %v", resp, err)
	}
	if n := len(p.sink.Notifications()); n != 1 {
		t.Fatalf("%d notifications for one message delivered three times", n)
	}

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
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Errorf("delivery %d: %+v %v", i, resp, err)
			}
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
	if m := p.get(t, id); sent != 1 || m.Status != rezagent.StatusCompleted || m.RetryCount != 0 {
		t.Fatalf("%d notifications, message %q retry_count %d; want 1, completed, 0", sent, m.Status, m.RetryCount)
	}
}

// Poison records fail alone and reach the dead-letter queue after the
// redrive maximum; the rest of their batch is delivered.
func TestPoisonRecords(t *testing.T) {
	p := newPipeline(t, pipelineOptions{noMapping: true})
	r := apitest.Do(t, p.api, "POST", "/messages", `{"message_type":"manual_notification","created_by":"user:a@example.com","payload":{"text":"good"}}`)
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
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	if strings.Join(failed, ",") != "not-json,wrong-shape,bad-id,unknown,trailing" {
		t.Fatalf("failed %v", failed)
	}
	if m := p.get(t, good.MessageID); m.Status != rezagent.StatusCompleted {
		t.Fatalf("good record of the batch: %q", m.Status)
	}

	// Through the emulated mapping: the poison record reaches the DLQ.
	q := newPipeline(t, pipelineOptions{})
	q.queue.Send("not json at all", nil)
	deadline := time.Now().Add(10 * time.Second)
	for q.dlq.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := q.dlq.Bodies(); len(got) != 1 || got[0] != "not json at all" || q.queue.Len() != 0 {
		t.Fatalf("dlq %v, queue %d", got, q.queue.Len())
	}
}

// The token comes from an SSM SecureString through SSM's real protocol.
func TestNtfyTokenFromSSM(t *testing.T) {
	ssm := awsloop.NewSSM()
	if err := ssm.Start(); err != nil {
		t.Fatal(err)
	}
	defer ssm.Close()
	ssm.PutSecureString("/rez-agent/dev/ntfy-token", testToken)
	p := newPipeline(t, pipelineOptions{env: map[string]string{
		contract.EnvNtfyToken: "", contract.EnvNtfyTokenParameter: "/rez-agent/dev/ntfy-token", "AWS_ENDPOINT_URL_SSM": ssm.URL()}})
	at := time.Now().UTC().Truncate(time.Minute)
	if err := p.scheduler.Run(context.Background(), fire(at)); err != nil {
		t.Fatal(err)
	}
	if m := p.await(t, rezagent.ScheduledMessageID(fire(at).ScheduleARN, at)); m.Status != rezagent.StatusCompleted {
		t.Fatalf("status %q (%s)", m.Status, m.ErrorMessage)
	}
	calls := ssm.CallsOf("GetParameter")
	var in struct {
		Name           string
		WithDecryption bool
	}
	if len(calls) != 1 || calls[0].Decode(&in) != nil || in.Name != "/rez-agent/dev/ntfy-token" || !in.WithDecryption {
		t.Fatalf("SSM calls %+v (%+v)", calls, in)
	}
}

type dynamodbtypesAV = types.AttributeValue

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
