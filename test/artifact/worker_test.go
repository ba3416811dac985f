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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/catalog"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
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
	require.NoError(t, sns.Start())
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
		status, out := scheduler.Invoke(t, fire("arn:aws:scheduler:us-east-1:123456789012:schedule/default/rezagent-dev", at, attempt))
		require.Equal(t, http.StatusOK, status, "scheduler attempt %d: %s\n%s", attempt, out, scheduler.logs.String())
		require.Equal(t, "null", string(out), "scheduler attempt %d\n%s", attempt, scheduler.logs.String())
	}
	mu.Lock()
	pubs := slices.Clone(published)
	mu.Unlock()
	require.Len(t, pubs, 1, "publishes for one fire time")
	pub := pubs[0]
	var n struct {
		MessageID string `json:"message_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(pub.Message), &n), "notice %q", pub.Message)
	require.NotEmpty(t, n.MessageID, "notice %q", pub.Message)
	// The scheduler's message is correlated by its own id, which the
	// publish carries as a message attribute (raw delivery makes it the
	// record's).
	assert.Equal(t, n.MessageID, pub.Attributes["correlation_id"], "publish attributes %v: correlation_id", pub.Attributes)
	assert.Equal(t, "scheduled_hello", pub.Attributes["message_type"], "publish attributes %v: message_type", pub.Attributes)

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
		require.Equal(t, http.StatusOK, status, "processor batch %d: %s\n%s", i, out, processor.logs.String())
		require.NoError(t, json.Unmarshal(out, &resp), "processor batch %d: %s\n%s", i, out, processor.logs.String())
		failed, _ := json.Marshal(resp.BatchItemFailures)
		assert.Equal(t, tc.want, string(failed), "batch %d: failures", i)
	}
	got := sink.Notifications()
	require.Len(t, got, 1, "notifications %+v", got)
	require.Equal(t, "hello world", got[0].Message, "notification %+v", got[0])
	require.Equal(t, proc.Env["NTFY_TOPIC"], got[0].Topic, "notification %+v", got[0])
	item, err := s.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(sched.Env["REZ_AGENT_MESSAGES_TABLE"]),
		Key: map[string]types.AttributeValue{"message_id": &types.AttributeValueMemberS{Value: n.MessageID}}, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	st, _ := item.Item["status"].(*types.AttributeValueMemberS)
	nid, _ := item.Item["notification_id"].(*types.AttributeValueMemberS)
	require.NotNil(t, st, "message %v: status", item.Item)
	require.Equal(t, "completed", st.Value, "message %v: status", item.Item)
	require.NotNil(t, nid, "message %v: notification_id", item.Item)
	require.Equal(t, got[0].ID, nid.Value, "message %v: notification_id", item.Item)

	// Every line about the message carries its correlation id, in both
	// functions (and a trace id where the invocation has one: these are
	// invoked without; TestRezAgentTrace follows a message's trace).
	processor.WaitRecord(t, `"delivered"`, func(r LogRecord) bool { return r.Fields["msg"] == "delivered" })
	for _, l := range []*Lambda{scheduler, processor} {
		lines := 0
		for _, r := range l.Records() {
			if r.Fields["message_id"] != n.MessageID {
				continue
			}
			lines++
			assert.Equal(t, n.MessageID, r.Fields["correlation_id"], "%s: line about the message without its correlation id: %s", l.fn.Service, r.Raw)
			if tr, ok := r.Fields["trace_id"].(string); ok {
				assert.True(t, strings.HasPrefix(tr, "1-"), "%s: trace_id %q is not an X-Ray trace id", l.fn.Service, tr)
			}
		}
		assert.NotZero(t, lines, "%s: no line names the message", l.fn.Service)
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
	require.NoError(t, err)
	defer fakes.Close()
	api := Start(t, s.RIE, s.QEMU, s.Functions["nucleus"])
	const account = "210987654321"
	do := func(method, path, body string, want int) map[string]any {
		t.Helper()
		r := api.Do(t, Request{Method: method, Path: path, Body: []byte(body), Authorizer: iam(callerARN)})
		require.Equal(t, want, r.StatusCode, "%s %s: %s", method, path, r.Body)
		return r.JSON
	}
	do(nucleuscontract.CreateAccount.Method, nucleuscontract.CreateAccount.URL(), `{"account_id":"`+account+`","account_name":"Artifact","role_arn":"arn:aws:iam::`+account+`:role/nucleus-executor-dev"}`, http.StatusCreated)
	// A fire two minutes ahead: after the schedule's creation, which
	// starts its window, as the executor requires.
	at := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	sc := do(nucleuscontract.CreateSchedule.Method, nucleuscontract.CreateSchedule.URL(), fmt.Sprintf(`{"schedule_name":"Artifact","start_cron":"%d %d * * *","end_cron":"0 0 1 1 *","timezone":"UTC","enabled":true}`, at.Minute(), at.Hour()), http.StatusCreated)
	id, _ := sc["schedule_id"].(string)
	require.NotEmpty(t, id, "schedule %v", sc)
	const instance = "arn:aws:ec2:eu-central-1:" + account + ":instance/i-0123456789abcdef0"
	api.Do(t, Request{Method: nucleuscontract.AttachResource.Method, Path: nucleuscontract.AttachResource.URL(id), Authorizer: iam(callerARN),
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
		status, out := executor.Invoke(t, fire("arn:aws:scheduler:us-east-1:123456789012:schedule/default/nucleus-executor-dev", at, attempt))
		require.Equal(t, http.StatusOK, status, "executor attempt %d: %s\n%s", attempt, out, executor.logs.String())
		require.Equal(t, "null", string(out), "executor attempt %d\n%s", attempt, executor.logs.String())
	}
	// One StartInstances, in eu-central-1, with the assumed role's credentials.
	starts := fakes.EC2.CallsOf("StartInstances")
	require.Len(t, starts, 1, "StartInstances calls %+v\n%s", starts, executor.logs.String())
	require.NotEqual(t, workerKey, starts[0].AccessKeyID, "StartInstances with the executor's own credentials, not the assumed role's")
	require.Equal(t, "eu-central-1", starts[0].Region, "StartInstances region")
	audit := api.Do(t, Request{Method: nucleuscontract.EntityLog.Method, Path: nucleuscontract.EntityLog.URL("schedule", id), Authorizer: iam(callerARN)})
	assert.Equal(t, http.StatusOK, audit.StatusCode, "audit of the schedule: %s", audit.Body)
	assert.Equal(t, 1, strings.Count(audit.Body, `"ec2:StartInstances"`), "audit of the schedule: ec2:StartInstances entries in %s", audit.Body)
	assert.Contains(t, audit.Body, "SUCCESS", "audit of the schedule")
	checkRole(t, s, &fn, append(db.Calls(), loopCalls(t, workerKey, fakes.STS.Server)...))
	for _, srv := range []*awsloop.Server{fakes.EC2.Server, fakes.RDS.Server, fakes.ECS.Server} {
		assert.Empty(t, loopCalls(t, workerKey, srv), "calls with the executor's own credentials, not the assumed role's")
	}
}

// AgenticPM's hold-queue release job as deployed: an action recorded
// through the bundled API, its hold then backdated to a minute ago; the job invoked with
// Scheduler's input, then again (a retry): released once, one event on
// the loopback EventBridge bus, every call allowed by the job's role
// (docs/schemas/agenticpm.md, "Release job").
func TestAgenticPMRelease(t *testing.T) {
	s := requireStage(t)
	fn := *s.Functions["agenticpm-release"]
	bus := fn.Env["AGENTICPM_EVENT_BUS"]
	ev := awsloop.NewEvents(bus)
	require.NoError(t, ev.Start())
	defer ev.Close()
	// The project through the API's function, the action through the
	// actions API's (decision 22: the API is three functions).
	api := Start(t, s.RIE, s.QEMU, s.Functions[pmcontract.API.Name])
	actions := Start(t, s.RIE, s.QEMU, s.Functions[pmcontract.Actions.Name])
	call := func(l *Lambda, method, path, body string, want int) map[string]any {
		t.Helper()
		r := l.Do(t, Request{Method: method, Path: path, Body: []byte(body), Authorizer: iam(callerARN)})
		require.Equal(t, want, r.StatusCode, "%s %s: %s", method, path, r.Body)
		return r.JSON
	}
	do := func(method, path, body string, want int) map[string]any {
		t.Helper()
		return call(actions, method, path, body, want)
	}
	p := call(api, pmcontract.CreateProject.Method, pmcontract.CreateProject.URL(), `{"name":"Artifact","source":"jira","sourceProjectKey":"ART","autonomyLevel":"monitoring"}`, http.StatusCreated)
	pid, _ := p["id"].(string)
	a := do(pmcontract.RecordAction.Method, pmcontract.RecordAction.URL(pid), fmt.Sprintf(`{"actionType":"email_sent","description":"due","heldUntil":%q}`,
		time.Now().UTC().Add(agenticpm.MinHold+time.Minute).Format(time.RFC3339Nano)), http.StatusCreated)
	aid, _ := a["id"].(string)
	created, _ := a["createdAt"].(string)
	require.NotEmpty(t, pid, "project %v", p)
	require.NotEmpty(t, aid, "action %v", a)
	// Its hold runs out (the API refuses a heldUntil less than
	// agenticpm.MinHold ahead, and the test does not wait for it).
	past := agenticpm.Timestamp(time.Now().Add(-time.Minute))
	_, err := s.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(s.Functions["agenticpm"].Env[pmcontract.EnvTable]),
		Key:                      map[string]types.AttributeValue{pmcontract.AttrPK: &types.AttributeValueMemberS{Value: pmcontract.ProjectPK(pid)}, pmcontract.AttrSK: &types.AttributeValueMemberS{Value: pmcontract.ActionSK(created, aid)}},
		UpdateExpression:         aws.String("SET #until = :until, #gsi1sk = :gsi1sk"),
		ExpressionAttributeNames: map[string]string{"#until": pmcontract.AttrHeldUntil, "#gsi1sk": pmcontract.AttrGSI1SK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":until": &types.AttributeValueMemberS{Value: past},
			":gsi1sk": &types.AttributeValueMemberS{Value: past + "#" + aid}},
		ConditionExpression: aws.String("attribute_exists(#until)")})
	require.NoError(t, err, "backdate the hold")

	db := recordDynamoDB(t, s.Endpoint)
	fn.Env = db.Env(withCredentials(clone(fn.Env, awsloop.EndpointEnv("EventBridge"), ev.URL())))
	job := Start(t, s.RIE, s.QEMU, &fn)
	for attempt := 1; attempt <= 2; attempt++ {
		status, out := job.Invoke(t, fire("arn:aws:scheduler:us-east-1:123456789012:schedule/default/agenticpm-release-dev", time.Now().UTC().Truncate(time.Minute), attempt))
		require.Equal(t, http.StatusOK, status, "release attempt %d: %s\n%s", attempt, out, job.logs.String())
		require.Equal(t, "null", string(out), "release attempt %d\n%s", attempt, job.logs.String())
	}
	// One event on the bus, with the job's credentials, naming the action.
	sent := ev.Events()
	require.Len(t, sent, 1, "events %+v", sent)
	require.Equal(t, bus, sent[0].Bus, "event %+v: bus", sent[0])
	require.Equal(t, workerKey, sent[0].AccessKeyID, "event %+v: credentials", sent[0])
	require.Contains(t, sent[0].Detail, aid, "event %+v: detail", sent[0])
	held := do(pmcontract.ListHeldActions.Method, pmcontract.ListHeldActions.URL(), "", http.StatusOK)
	items, _ := held["items"].([]any)
	assert.Empty(t, items, "held after the release")
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
		if !assert.True(t, ok, "function %s (%s): no contract names it", n, fn.Service) {
			continue
		}
		if c.Kind == service.HTTP {
			continue
		}
		if name, ok := workerTests[fn.Service]; ok {
			t.Logf("%s (%s): %s", fn.Service, c.Kind, name)
			continue
		}
		if !assert.Equal(t, service.Schedule, c.Kind, "%s is a %s worker without a test under the emulator: add one with the events its trigger sends, and name it in workerTests", fn.Service, c.Kind) {
			continue
		}
		t.Run(fn.Service, func(t *testing.T) {
			f := *fn
			db := recordDynamoDB(t, s.Endpoint)
			f.Env = db.Env(withCredentials(f.Env))
			l := Start(t, s.RIE, s.QEMU, &f)
			status, out := l.Invoke(t, fire("arn:aws:scheduler:us-east-1:123456789012:schedule/default/"+fn.Service, time.Now().UTC().Truncate(time.Minute), 1))
			require.Equal(t, http.StatusOK, status, "%s\n%s", out, l.logs.String())
			require.Equal(t, "null", string(out), "answer\n%s", l.logs.String())

			checkRole(t, s, &f, db.Calls())
		})
	}
}
