package artifact

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/dynastack/dynastack/lambdas/platform/schedule"
)

// rez_agent's workers as deployed: the scheduler invoked with the input
// EventBridge Scheduler sends (context attributes replaced), twice for one
// fire time; the processor invoked with an SQS event holding the
// scheduler's notice, a poison record, and the notice again. One message,
// one notification at the ntfy server, the poison record reported as the
// only batch item failure (docs/schemas/rezagent.md, "Pipeline").
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

	sched.Env = clone(sched.Env, "AWS_ENDPOINT_URL_SNS", sns.URL())
	proc.Env = clone(proc.Env, "NTFY_URL", ntfy.URL)
	scheduler := Start(t, s.RIE, s.QEMU, &sched)
	processor := Start(t, s.RIE, s.QEMU, &proc)

	input := strings.NewReplacer(
		"<aws.scheduler.schedule-arn>", "arn:aws:scheduler:us-east-1:123456789012:schedule/default/rezagent-dev",
		"<aws.scheduler.scheduled-time>", "2026-11-26T09:00:00Z",
		"<aws.scheduler.execution-id>", "d32c5kddcf5bb8c3",
		"<aws.scheduler.attempt-number>", "1",
	).Replace(schedule.Input)
	for attempt := 0; attempt < 2; attempt++ {
		if status, out := scheduler.Invoke(t, json.RawMessage(input)); status != http.StatusOK || string(out) != "null" {
			t.Fatalf("scheduler attempt %d: %d %s\n%s", attempt, status, out, scheduler.logs.String())
		}
	}
	mu.Lock()
	if len(published) != 1 {
		mu.Unlock()
		t.Fatalf("%d publishes for one fire time, want 1", len(published))
	}
	notice := published[0].Message
	mu.Unlock()
	var n struct {
		MessageID string `json:"message_id"`
	}
	if err := json.Unmarshal([]byte(notice), &n); err != nil || n.MessageID == "" {
		t.Fatalf("notice %q", notice)
	}

	rec := func(id, body string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, ReceiptHandle: "h-" + id, Body: body, EventSource: "aws:sqs",
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:notifications", AWSRegion: "us-east-1",
			Attributes: map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": "1795651200000"}}
	}
	for i, ev := range []events.SQSEvent{
		{Records: []events.SQSMessage{rec("good", notice), rec("poison", "not json")}},
		{Records: []events.SQSMessage{rec("again", notice)}},
	} {
		status, out := processor.Invoke(t, ev)
		var resp events.SQSEventResponse
		if status != http.StatusOK || json.Unmarshal(out, &resp) != nil {
			t.Fatalf("processor batch %d: %d %s\n%s", i, status, out, processor.logs.String())
		}
		want := map[int]string{0: `[{"itemIdentifier":"poison"}]`, 1: `null`}[i]
		if got, _ := json.Marshal(resp.BatchItemFailures); string(got) != want {
			t.Errorf("batch %d: failures %s, want %s", i, got, want)
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
