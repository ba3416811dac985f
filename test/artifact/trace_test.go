package artifact

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
)

// One trace per message, with the bundled bootstraps under the Lambda
// emulator (docs/schemas/rezagent.md, "Tracing one message"): the API
// invoked in a trace (Lambda's active tracing starts one for an HTTP API's
// invocation) publishes with that header (X-Amzn-Trace-Id, which the
// loopback SNS keeps), SQS hands the record over with it as the
// AWSTraceHeader system attribute and the event source mapping invokes the
// processor in it. The processor's lines about the message carry the API
// invocation's trace id, and its ntfy request the header.
func TestRezAgentTrace(t *testing.T) {
	s := requireStage(t)
	sns := awsloop.NewSNS()
	require.NoError(t, sns.Start())
	defer sns.Close()
	api, proc := *s.Functions["rezagent"], *s.Functions["rezagent-processor"]
	var mu sync.Mutex
	var published []awsloop.Publication
	sns.AddTopic(api.Env["REZ_AGENT_TOPIC_ARN"], func(p awsloop.Publication) {
		mu.Lock()
		defer mu.Unlock()
		published = append(published, p)
	})
	sink := ntfysink.New("", nil)
	ntfy := httptest.NewServer(sink)
	defer ntfy.Close()
	api.Env = withCredentials(clone(api.Env, "AWS_ENDPOINT_URL_SNS", sns.URL()))
	proc.Env = withCredentials(clone(proc.Env, "NTFY_URL", ntfy.URL))
	apiFn := Start(t, s.RIE, s.QEMU, &api)
	processor := Start(t, s.RIE, s.QEMU, &proc)

	const (
		header = "Root=1-6789abcd-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1"
		root   = "1-6789abcd-0123456789abcdef01234567"
	)
	r := apiFn.Do(t, Request{Method: "POST", Path: "/messages", Authorizer: iam(callerARN), Trace: header,
		Body: []byte(`{"message_type":"manual_notification","created_by":"user:a@example.com","payload":{"text":"traced"}}`)})
	require.Equal(t, http.StatusCreated, r.StatusCode, "create: %s\n%s", r.Body, apiFn.logs.String())
	id, _ := r.JSON["message_id"].(string)
	require.NotEmpty(t, id, "created message: %s", r.Body)
	assert.Equal(t, root, accessLog(t, apiFn, r.GatewayID).Fields["trace_id"], "the API's request line: the invocation's trace id")
	mu.Lock()
	pubs := slices.Clone(published)
	mu.Unlock()
	require.Len(t, pubs, 1, "publishes of the create")
	assert.Equal(t, header, pubs[0].TraceHeader, "the publish's X-Amzn-Trace-Id: the API invocation's trace header")

	rec := sqsRecord("traced-1", pubs[0].Message, 1, pubs[0].Attributes)
	rec.Attributes["AWSTraceHeader"] = pubs[0].TraceHeader
	status, out := processor.InvokeTraced(t, events.SQSEvent{Records: []events.SQSMessage{rec}}, pubs[0].TraceHeader)
	require.Equal(t, http.StatusOK, status, "processor: %s\n%s", out, processor.logs.String())
	var resp events.SQSEventResponse
	require.NoError(t, json.Unmarshal(out, &resp), "processor: %s", out)
	assert.Empty(t, resp.BatchItemFailures, "processor: batch item failures")

	delivered := processor.WaitRecord(t, `"delivered" of `+id, func(r LogRecord) bool {
		return r.Fields["msg"] == "delivered" && r.Fields["message_id"] == id
	})
	assert.Equal(t, root, delivered.Fields["trace_id"], "the processor's delivered line: the API invocation's trace id (%s)", delivered.Raw)
	lines := 0
	for _, l := range processor.Records() {
		if l.Fields["message_id"] != id {
			continue
		}
		lines++
		assert.Equal(t, root, l.Fields["trace_id"], "processor line about the message: %s", l.Raw)
		assert.NotContains(t, l.Fields, "invocation_trace_id", "processor line in its message's own invocation trace: %s", l.Raw)
	}
	assert.NotZero(t, lines, "processor lines about the message")
	got := sink.Notifications()
	require.Len(t, got, 1, "notifications")
	assert.Equal(t, "traced", got[0].Message, "notification")
	assert.Equal(t, header, got[0].TraceHeader, "the ntfy request's X-Amzn-Trace-Id: the message's trace header")
}
