package main_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	rez "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/client/opt"
	rezclient "github.com/dynastack/dynastack/lambdas/client/rezagent"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type notifications struct {
	Notifications []struct {
		ID          string `json:"id"`
		Topic       string `json:"topic"`
		Message     string `json:"message"`
		TraceHeader string `json:"trace_header"`
	} `json:"notifications"`
}

func (n notifications) count(message string) int {
	c := 0
	for _, x := range n.Notifications {
		if x.Message == message {
			c++
		}
	}
	return c
}

// The rez_agent pipeline as make dev runs it: the scheduler's first local
// run, a message created with curl, and a run triggered now all reach the
// local ntfy sink, through the SNS fake, the emulated queue and the
// processor, with no action besides the requests.
func TestPipeline(t *testing.T) {
	t.Parallel()
	// LOCAL_SCHEDULE_EVERY: only the first run, 2 s after start.
	r := startEnv(t, filepath.Dir(testenv.Template(t, "dev", "rezagent")), []string{"LOCAL_SCHEDULE_EVERY=1h", "NTFY_URL="})

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				require.FailNow(t, what+": not within 30 s")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	sink := func() notifications {
		var n notifications
		call(t, "GET", r.base+"/_local/ntfy", "", 200, &n)
		return n
	}
	waitFor("the scheduled hello at the sink", func() bool { return sink().count("hello world") == 1 })

	// A client's message, through the generated client (lambdas/client/rezagent).
	c, err := rezclient.NewClientWithResponses(r.base + "/" + rez.Name)
	require.NoError(t, err)
	var payload any = map[string]any{"text": "from curl"}
	created, err := c.CreateMessageWithResponse(t.Context(), nil, rezclient.CreateMessageJSONRequestBody{
		MessageType: new("manual_notification"), CreatedBy: new("user:a@example.com"), Payload: payload})
	answered(t, 201, created, created.Body, err, "create message")
	id, err := uuid.Parse(created.JSON201.MessageId)
	require.NoError(t, err, "message_id is a UUID")
	var m *rezclient.Message
	waitFor("the created message completed", func() bool {
		got, err := c.GetMessageWithResponse(t.Context(), id)
		answered(t, 200, got, got.Body, err, "get message")
		m = got.JSON200
		return m.Status == "completed"
	})
	n := sink()
	require.Equal(t, 1, n.count("from curl"), "messages from curl at the sink %+v", n)
	require.NotEmpty(t, opt.Value(m.NotificationId), "message's notification id: %+v", m)

	// One trace per message: the processor's line for the message has the
	// trace id of the API invocation that created it (its request line,
	// found by the message's correlation id), carried by the publish's
	// X-Amzn-Trace-Id, the queue's AWSTraceHeader and the mapping's
	// invocation; the ntfy request carried the same trace header.
	delivered := r.record(t, "the processor's delivered line", `"msg":"delivered"`, `"message_id":"`+created.JSON201.MessageId+`"`)
	trace, _ := delivered["trace_id"].(string)
	require.Regexp(t, `^1-[0-9a-f]{8}-[0-9a-f]{24}$`, trace, "delivered line's trace_id: %v", delivered)
	corr, _ := delivered["correlation_id"].(string)
	require.NotEmpty(t, corr, "delivered line's correlation_id: %v", delivered)
	request := r.record(t, "the create's request line", `"msg":"request"`, `"correlation_id":"`+corr+`"`, `"method":"POST"`)
	assert.Equal(t, trace, request["trace_id"], "the API invocation's trace id (its request line %v) on the processor's line", request)
	for _, x := range n.Notifications {
		if x.Message == "from curl" {
			assert.Contains(t, x.TraceHeader, "Root="+trace+";", "the ntfy request's X-Amzn-Trace-Id")
		}
	}
	// The scheduler's message too: its run's trace on the processor's line.
	var hello string
	for _, x := range n.Notifications {
		if x.Message == "hello world" {
			hello = x.TraceHeader
		}
	}
	scheduled := r.record(t, "the scheduler's line", `"msg":"scheduled message"`, `"created":true`)
	assert.Contains(t, hello, "Root="+scheduled["trace_id"].(string)+";", "the scheduled hello's X-Amzn-Trace-Id at ntfy: the scheduler run's trace (%v)", scheduled)

	time.Sleep(1100 * time.Millisecond) // a new fire time (seconds)
	call(t, "POST", r.base+"/_local/schedules/rezagent-scheduler", "", 200, nil)
	waitFor("the triggered hello at the sink", func() bool { return sink().count("hello world") == 2 })
	call(t, "POST", r.base+"/_local/schedules/no-such-job", "", 404, nil)

	// Delivered records leave the queue (the mapping deletes them once the
	// invocation returns), and nothing reached a dead-letter queue.
	waitFor("empty queues", func() bool {
		var queues struct {
			Depth map[string]int `json:"depth"`
		}
		call(t, "GET", r.base+"/_local/queues", "", 200, &queues)
		total := 0
		for _, n := range queues.Depth {
			total += n
		}
		return len(queues.Depth) > 0 && total == 0
	})
}

// record is the runner's first JSON log line holding every one of subs,
// decoded, waiting for it (a line is written after the answer it is about).
func (r *runner) record(t *testing.T, what string, subs ...string) map[string]any {
	t.Helper()
	var line string
	require.Eventually(t, func() bool {
		line, _ = r.stderr.find(0, subs...)
		return line != ""
	}, 10*time.Second, 50*time.Millisecond, "%s: no log line with %q", what, subs)
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &rec), "%s: %s", what, line)
	return rec
}
