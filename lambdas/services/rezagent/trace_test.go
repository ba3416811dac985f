package rezagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a log sink the functions' goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// measurements are the EMF measurements of the lines so far.
func (s *syncBuffer) measurements(t *testing.T) []metrics.Measurement {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	ms, err := metrics.ParseLines(s.b.Bytes())
	require.NoError(t, err, "EMF lines")
	return ms
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(s.b.Bytes()), []byte("\n")) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(l, &rec), "log line %q", l)
		out = append(out, rec)
	}
	return out
}

// The message's correlation id (the create's request id) travels with it
// (item, SNS message attribute, SQS record attribute) and is on every line
// the API and the processor log about it; the client's X-Correlation-Id is
// on the API's request line as client_correlation_id, beside it.
func TestCorrelationIDFollowsTheMessage(t *testing.T) {
	var buf syncBuffer
	p := newPipeline(t, pipelineOptions{log: logx.New(&buf, slog.LevelInfo)})
	const clientCorr = "checkout-7f3a"
	req := httptest.NewRequest(contract.CreateMessage.Method, contract.CreateMessage.URL(), strings.NewReader(`{"message_type":"manual_notification","created_by":"user:me@example.com","payload":{"text":"Deploy done"}}`))
	req.Header.Set("X-Correlation-Id", clientCorr)
	rec := httptest.NewRecorder()
	p.api.ServeHTTP(rec, req)
	require.Equal(t, http.StatusCreated, rec.Code, "create: %s", rec.Body)
	corr := rec.Header().Get("X-Request-Id")
	require.NotEmpty(t, corr, "the create's request id")
	var created rezagent.Message
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &created))
	m := p.await(t, created.MessageID)
	require.Equal(t, rezagent.StatusCompleted, m.Status, "message %+v", m.Summary)
	require.Equal(t, corr, m.CorrelationID, "message %+v", m.Summary)
	sent := p.sns.CallsOf("Publish")
	if assert.Len(t, sent, 1, "SNS publishes") {
		assert.True(t, hasAttribute(&sent[0], "correlation_id", corr), "SNS publish %+v lacks the correlation_id attribute", sent[0])
	}
	// The processor logs "delivered" after it finishes; give its line a
	// moment after the status shows.
	deadline := time.Now().Add(5 * time.Second)
	for {
		msgs := map[string]bool{}
		for _, l := range buf.lines(t) {
			if l["message_id"] == created.MessageID {
				require.Equal(t, corr, l["correlation_id"], "line about the message without its correlation id: %v", l)
			}
			if l["correlation_id"] == corr {
				msgs[l["msg"].(string)] = true
			}
			if l["msg"] == "request" && l["correlation_id"] == corr {
				require.Equal(t, clientCorr, l["client_correlation_id"], "the API's request line: the client's correlation id beside ours: %v", l)
			}
		}
		if msgs["request"] && msgs["delivered"] {
			break
		}
		require.False(t, time.Now().After(deadline), "lines with the correlation id: %v; want the API's request and the processor's delivered", msgs)
		time.Sleep(20 * time.Millisecond)
	}

	// A record without the attribute (published before it existed) takes
	// the id from the message it claims.
	m2, err := p.processor.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		record("again", `{"message_id":"`+created.MessageID+`"}`, 1)}})
	require.NoError(t, err, "redelivery")
	require.Empty(t, m2.BatchItemFailures, "redelivery: %+v", m2)
	var found bool
	for _, l := range buf.lines(t) {
		if l["msg"] == "record acknowledged without delivery" {
			found = true
			assert.Equal(t, corr, l["correlation_id"], "redelivered record's line %v lacks the correlation id", l)
		}
	}
	assert.True(t, found, "no line for the redelivered record")
}

// hasAttribute reports whether an SNS query-protocol Publish call carries
// the string message attribute name=value.
func hasAttribute(call *awsloop.Call, name, value string) bool {
	for i := 1; i <= 10; i++ {
		prefix := fmt.Sprintf("MessageAttributes.entry.%d", i)
		if call.Get(prefix+".Name") == name {
			return call.Get(prefix+".Value.StringValue") == value && call.Get(prefix+".Value.DataType") == "String"
		}
	}
	return false
}
