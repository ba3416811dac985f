package artifact

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
)

// workerKey is the access key a worker's execution environment gets, as
// Lambda gives a function its role's credentials in AWS_ACCESS_KEY_ID:
// the loopback servers record which key signed each call, so the calls
// of the function's own role tell apart from those of a role it assumed.
const workerKey = "AKIAARTIFACTWORKER01"

func withCredentials(env map[string]string) map[string]string {
	return clone(env, "AWS_ACCESS_KEY_ID", workerKey, "AWS_SECRET_ACCESS_KEY", "artifact-secret", "AWS_SESSION_TOKEN", "artifact-session")
}

// fire is the target input EventBridge Scheduler sends for one fire
// time: the stacks' service.ScheduleInput with its context attributes replaced.
func fire(scheduleARN string, at time.Time, attempt int) json.RawMessage {
	return json.RawMessage(strings.NewReplacer(
		"<aws.scheduler.schedule-arn>", scheduleARN,
		"<aws.scheduler.scheduled-time>", at.UTC().Format(time.RFC3339),
		"<aws.scheduler.execution-id>", fmt.Sprintf("d32c5kddcf5bb8c%d", attempt),
		"<aws.scheduler.attempt-number>", strconv.Itoa(attempt),
	).Replace(service.ScheduleInput))
}

// sqsRecord is a record as an SQS event source mapping hands it over,
// receives times received.
func sqsRecord(id, body string, receives int, attrs map[string]string) events.SQSMessage {
	m := events.SQSMessage{MessageId: id, ReceiptHandle: "h-" + id, Body: body, EventSource: "aws:sqs",
		EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:notifications", AWSRegion: "us-east-1",
		Attributes:        map[string]string{"ApproximateReceiveCount": strconv.Itoa(receives), "SentTimestamp": "1795651200000"},
		MessageAttributes: map[string]events.SQSMessageAttribute{}}
	for k, v := range attrs {
		m.MessageAttributes[k] = events.SQSMessageAttribute{DataType: "String", StringValue: aws.String(v)}
	}
	return m
}

// rez_agent's workers as deployed: the scheduler invoked with the input
// EventBridge Scheduler sends (context attributes replaced), twice for one
// fire time; the processor invoked with SQS batches as the event source
// mapping (ReportBatchItemFailures) sends them: the scheduler's notice
// with the attributes raw delivery carries, a poison record, the notice
// redelivered (a second receive) and again in a new batch. One message,
// one notification at the ntfy server, the poison record reported as the
// only batch item failure, the correlation id on every processor line
// about the message, and every call allowed by each function's role
// (docs/schemas/rezagent.md, "Pipeline").
func TestRezAgentWorkers(t *testing.T) {
	s := requireStage(t)
	sns := awsloop.NewSNS()
	if err := sns.Start(); err != nil {
		t.Fatal(err)
	}
	defer sns.Close()
	var mu sync.Mutex
	var published []awsloop.Publication
	sched, proc := *s.Functions["rezagent-scheduler"], *s.Functions["rezagent-processor"]
	sns.AddTopic(sched.Env["REZ_AGENT_TOPIC_ARN"], func(p awsloop.Publication) {
		mu.Lock()
		defer mu.Unlock()
		published = append(published, p)
	})
	sink := ntfysink.New("", nil)
	ntfy := httptest.NewServer(sink)
	defer ntfy.Close()

	schedDB, procDB := recordDynamoDB(t, s.Endpoint), recordDynamoDB(t, s.Endpoint)
	sched.Env = schedDB.Env(withCredentials(clone(sched.Env, "AWS_ENDPOINT_URL_SNS", sns.URL())))
	proc.Env = procDB.Env(withCredentials(clone(proc.Env, "NTFY_URL", ntfy.URL)))
	scheduler := Start(t, s.RIE, s.QEMU, &sched)
	processor := Start(t, s.RIE, s.QEMU, &proc)

	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	for attempt := 1; attempt <= 2; attempt++ {
		if status, out := scheduler.Invoke(t, fire("arn:aws:scheduler:us-east-1:123456789012:schedule/default/rezagent-dev", at, attempt)); status != http.StatusOK || string(out) != "null" {
			t.Fatalf("scheduler attempt %d: %d %s\n%s", attempt, status, out, scheduler.logs.String())
		}
	}
	mu.Lock()
	if len(published) != 1 {
		mu.Unlock()
		t.Fatalf("%d publishes for one fire time, want 1", len(published))
	}
	pub := published[0]
	mu.Unlock()
	var n struct {
		MessageID string `json:"message_id"`
	}
	if err := json.Unmarshal([]byte(pub.Message), &n); err != nil || n.MessageID == "" {
		t.Fatalf("notice %q", pub.Message)
	}
	// The scheduler's message is correlated by its own id, which the
	// publish carries as a message attribute (raw delivery makes it the
	// record's).
	if pub.Attributes["correlation_id"] != n.MessageID || pub.Attributes["message_type"] != "scheduled_hello" {
		t.Errorf("publish attributes %v, want correlation_id %s", pub.Attributes, n.MessageID)
	}

	for i, tc := range []struct {
		ev   events.SQSEvent
		want string
	}{
		{events.SQSEvent{Records: []events.SQSMessage{sqsRecord("good", pub.Message, 1, pub.Attributes), sqsRecord("poison", "not json", 1, nil)}}, `[{"itemIdentifier":"poison"}]`},
		// The same record received again (its visibility timeout ran out
		// before the deletion): acknowledged, not delivered again.
		{events.SQSEvent{Records: []events.SQSMessage{sqsRecord("good", pub.Message, 2, pub.Attributes)}}, `null`},
		// A copy without the attribute (published by an older version).
		{events.SQSEvent{Records: []events.SQSMessage{sqsRecord("again", pub.Message, 1, nil)}}, `null`},
		// The poison record on its last receive: still reported, and SQS
		// moves it to the dead-letter queue.
		{events.SQSEvent{Records: []events.SQSMessage{sqsRecord("poison", "not json", 3, nil)}}, `[{"itemIdentifier":"poison"}]`},
	} {
		status, out := processor.Invoke(t, tc.ev)
		var resp events.SQSEventResponse
		if status != http.StatusOK || json.Unmarshal(out, &resp) != nil {
			t.Fatalf("processor batch %d: %d %s\n%s", i, status, out, processor.logs.String())
		}
		if got, _ := json.Marshal(resp.BatchItemFailures); string(got) != tc.want {
			t.Errorf("batch %d: failures %s, want %s", i, got, tc.want)
		}
	}
	got := sink.Notifications()
	if len(got) != 1 || got[0].Message != "hello world" || got[0].Topic != proc.Env["NTFY_TOPIC"] {
		t.Fatalf("notifications %+v", got)
	}
	item, err := s.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(sched.Env["REZ_AGENT_MESSAGES_TABLE"]),
		Key: map[string]types.AttributeValue{"message_id": &types.AttributeValueMemberS{Value: n.MessageID}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := item.Item["status"].(*types.AttributeValueMemberS)
	nid, _ := item.Item["notification_id"].(*types.AttributeValueMemberS)
	if st == nil || st.Value != "completed" || nid == nil || nid.Value != got[0].ID {
		t.Fatalf("message %v", item.Item)
	}

	// Every line about the message carries its correlation id, in both
	// functions (and the invocation's X-Ray trace id where the emulator
	// passes one: it does not, so trace_id is checked by platform/logx).
	processor.WaitRecord(t, `"delivered"`, func(r LogRecord) bool { return r.Fields["msg"] == "delivered" })
	for _, l := range []*Lambda{scheduler, processor} {
		lines := 0
		for _, r := range l.Records() {
			if r.Fields["message_id"] != n.MessageID {
				continue
			}
			lines++
			if r.Fields["correlation_id"] != n.MessageID {
				t.Errorf("%s: line about the message without its correlation id: %s", l.fn.Service, r.Raw)
			}
			if tr, ok := r.Fields["trace_id"].(string); ok && !strings.HasPrefix(tr, "1-") {
				t.Errorf("%s: trace_id %q is not an X-Ray trace id", l.fn.Service, tr)
			}
		}
		if lines == 0 {
			t.Errorf("%s: no line names the message", l.fn.Service)
		}
	}

	checkRole(t, s, &sched, append(schedDB.Calls(), loopCalls(t, workerKey, sns.Server)...))
	checkRole(t, s, &proc, procDB.Calls())
}

// Nucleus's executor as deployed: a schedule created through the bundled
// API whose start_cron fires at the invocation's fire time, the executor
// invoked with Scheduler's input for it twice (a retry), against DynamoDB
// Local and the loopback STS and EC2: one StartInstances, made with the
// assumed role's credentials, one EXECUTE audit entry; every call of the
// executor's own credentials allowed by its role (docs/schemas/nucleus.md,
// "Executor").
func TestNucleusExecutor(t *testing.T) {
	s := requireStage(t)
	fakes, err := awsloop.StartAll()
	if err != nil {
		t.Fatal(err)
	}
	defer fakes.Close()
	api := Start(t, s.RIE, s.QEMU, s.Functions["nucleus"])
	const account = "210987654321"
	do := func(method, path, body string, want int) map[string]any {
		t.Helper()
		r := api.Do(t, Request{Method: method, Path: path, Body: []byte(body), Authorizer: iam(callerARN)})
		if r.StatusCode != want {
			t.Fatalf("%s %s: %d %s", method, path, r.StatusCode, r.Body)
		}
		return r.JSON
	}
	do("POST", "/accounts", `{"account_id":"`+account+`","account_name":"Artifact","role_arn":"arn:aws:iam::`+account+`:role/nucleus-executor-dev"}`, http.StatusCreated)
	// A fire two minutes ahead: after the schedule's creation, which
	// starts its window, as the executor requires.
	at := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	sc := do("POST", "/schedules", fmt.Sprintf(`{"schedule_name":"Artifact","start_cron":"%d %d * * *","end_cron":"0 0 1 1 *","timezone":"UTC","enabled":true}`, at.Minute(), at.Hour()), http.StatusCreated)
	id, _ := sc["schedule_id"].(string)
	if id == "" {
		t.Fatalf("schedule %v", sc)
	}
	const instance = "arn:aws:ec2:eu-central-1:" + account + ":instance/i-0123456789abcdef0"
	api.Do(t, Request{Method: "PUT", Path: "/schedules/" + id + "/resources", Authorizer: iam(callerARN),
		Body: []byte(`{"resource_arn":"` + instance + `","resource_type":"ec2","region":"eu-central-1","account_id":"` + account + `"}`)})

	fn := *s.Functions["nucleus-executor"]
	db := recordDynamoDB(t, s.Endpoint)
	env := withCredentials(fn.Env)
	for k, v := range fakes.Env() {
		env[k] = v
	}
	fn.Env = db.Env(env)
	executor := Start(t, s.RIE, s.QEMU, &fn)
	for attempt := 1; attempt <= 2; attempt++ {
		if status, out := executor.Invoke(t, fire("arn:aws:scheduler:us-east-1:123456789012:schedule/default/nucleus-executor-dev", at, attempt)); status != http.StatusOK || string(out) != "null" {
			t.Fatalf("executor attempt %d: %d %s\n%s", attempt, status, out, executor.logs.String())
		}
	}
	starts := fakes.EC2.CallsOf("StartInstances")
	if len(starts) != 1 || starts[0].AccessKeyID == workerKey || starts[0].Region != "eu-central-1" {
		t.Fatalf("StartInstances calls %+v: want one, in eu-central-1, with the assumed role's credentials\n%s", starts, executor.logs.String())
	}
	audit := api.Do(t, Request{Method: "GET", Path: "/audit/schedule/" + id, Authorizer: iam(callerARN)})
	if audit.StatusCode != http.StatusOK || strings.Count(audit.Body, `"ec2:StartInstances"`) != 1 || !strings.Contains(audit.Body, "SUCCESS") {
		t.Errorf("audit of the schedule: %d %s", audit.StatusCode, audit.Body)
	}
	checkRole(t, s, &fn, append(db.Calls(), loopCalls(t, workerKey, fakes.STS.Server)...))
	for _, srv := range []*awsloop.Server{fakes.EC2.Server, fakes.RDS.Server, fakes.ECS.Server} {
		if own := loopCalls(t, workerKey, srv); len(own) > 0 {
			t.Errorf("calls with the executor's own credentials, not the assumed role's: %v", own)
		}
	}
}

// AgenticPM's hold-queue release job as deployed: an action held until a
// minute ago, recorded through the bundled API; the job invoked with
// Scheduler's input, then again (a retry): released once, one event on
// the loopback EventBridge bus, every call allowed by the job's role
// (docs/schemas/agenticpm.md, "Release job").
func TestAgenticPMRelease(t *testing.T) {
	s := requireStage(t)
	fn := *s.Functions["agenticpm-release"]
	bus := fn.Env["AGENTICPM_EVENT_BUS"]
	ev := awsloop.NewEvents(bus)
	if err := ev.Start(); err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	api := Start(t, s.RIE, s.QEMU, s.Functions["agenticpm"])
	do := func(method, path, body string, want int) map[string]any {
		t.Helper()
		r := api.Do(t, Request{Method: method, Path: path, Body: []byte(body), Authorizer: iam(callerARN)})
		if r.StatusCode != want {
			t.Fatalf("%s %s: %d %s", method, path, r.StatusCode, r.Body)
		}
		return r.JSON
	}
	p := do("POST", "/projects", `{"name":"Artifact","source":"jira","sourceProjectKey":"ART","autonomyLevel":"monitoring"}`, http.StatusCreated)
	pid, _ := p["id"].(string)
	a := do("POST", "/projects/"+pid+"/actions", fmt.Sprintf(`{"actionType":"email_sent","description":"due","heldUntil":%q}`,
		time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano)), http.StatusCreated)
	aid, _ := a["id"].(string)
	if pid == "" || aid == "" {
		t.Fatalf("project %v action %v", p, a)
	}

	db := recordDynamoDB(t, s.Endpoint)
	fn.Env = db.Env(withCredentials(clone(fn.Env, awsloop.EndpointEnv("EventBridge"), ev.URL())))
	job := Start(t, s.RIE, s.QEMU, &fn)
	for attempt := 1; attempt <= 2; attempt++ {
		if status, out := job.Invoke(t, fire("arn:aws:scheduler:us-east-1:123456789012:schedule/default/agenticpm-release-dev", time.Now().UTC().Truncate(time.Minute), attempt)); status != http.StatusOK || string(out) != "null" {
			t.Fatalf("release attempt %d: %d %s\n%s", attempt, status, out, job.logs.String())
		}
	}
	sent := ev.Events()
	if len(sent) != 1 || sent[0].Bus != bus || sent[0].AccessKeyID != workerKey || !strings.Contains(sent[0].Detail, aid) {
		t.Fatalf("events %+v: want one on %s naming %s", sent, bus, aid)
	}
	held := do("GET", "/actions/held", "", http.StatusOK)
	if items, _ := held["items"].([]any); len(items) != 0 {
		t.Errorf("held after the release: %v", items)
	}
	job.WaitRecord(t, "the run's report", func(r LogRecord) bool {
		return r.Fields["msg"] == "hold queue run" && r.Fields["released"] == float64(1)
	})
	checkRole(t, s, &fn, append(db.Calls(), loopCalls(t, workerKey, ev.Server)...))
}

func clone(env map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(env)+len(kv)/2)
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// workerTests names the test that invokes each worker of the contracts
// with the events its trigger sends.
var workerTests = map[string]string{
	"rezagent-scheduler": "TestRezAgentWorkers",
	"rezagent-processor": "TestRezAgentWorkers",
	"nucleus-executor":   "TestNucleusExecutor",
	"agenticpm-release":  "TestAgenticPMRelease",
	"stak-stream":        "TestStakStreamConsumer",
}

// Every function of the stage that is not an API is invoked as deployed
// by a test of its own; a scheduled worker without one is invoked here
// with Scheduler's input (it must answer null, and every call it makes
// must be allowed by its role), and a queue or stream consumer without one
// fails: its events need a test that knows what they carry.
func TestEveryWorker(t *testing.T) {
	s := requireStage(t)
	for _, n := range slices.Sorted(maps.Keys(s.Functions)) {
		fn := s.Functions[n]
		c, ok := catalog.Function(fn.Service)
		if !ok {
			t.Errorf("function %s (%s): no contract names it", n, fn.Service)
			continue
		}
		if c.Kind == service.HTTP {
			continue
		}
		if name, ok := workerTests[fn.Service]; ok {
			t.Logf("%s (%s): %s", fn.Service, c.Kind, name)
			continue
		}
		if c.Kind != service.Schedule {
			t.Errorf("%s is a %s worker without a test under the emulator: add one with the events its trigger sends, and name it in workerTests", fn.Service, c.Kind)
			continue
		}
		t.Run(fn.Service, func(t *testing.T) {
			f := *fn
			db := recordDynamoDB(t, s.Endpoint)
			f.Env = db.Env(withCredentials(f.Env))
			l := Start(t, s.RIE, s.QEMU, &f)
			if status, out := l.Invoke(t, fire("arn:aws:scheduler:us-east-1:123456789012:schedule/default/"+fn.Service, time.Now().UTC().Truncate(time.Minute), 1)); status != http.StatusOK || string(out) != "null" {
				t.Fatalf("%d %s\n%s", status, out, l.logs.String())
			}
			checkRole(t, s, &f, db.Calls())
		})
	}
}
