package fn_test

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"

	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Each record is handled in its message's trace (AWSTraceHeader), a record
// without one in the invocation's, and only the records answered Retry
// are reported.
func TestQueueBatchTraces(t *testing.T) {
	const (
		invocation = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
		message    = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad9;Sampled=1"
	)
	t.Setenv(logx.EnvTraceID, "")
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "traced", Attributes: map[string]string{"AWSTraceHeader": message}},
		{MessageId: "untraced", Attributes: map[string]string{}},
		{MessageId: "malformed", Attributes: map[string]string{"AWSTraceHeader": "Root=nope"}},
	}}
	var mu sync.Mutex
	got := map[string]string{}
	resp := fn.QueueBatch(logx.WithInvocationTrace(context.Background(), invocation), ev, 2, func(ctx context.Context, rec events.SQSMessage) fn.Outcome {
		mu.Lock()
		defer mu.Unlock()
		got[rec.MessageId] = logx.TraceID(ctx)
		if rec.MessageId == "malformed" {
			return fn.Retry
		}
		return fn.Done
	})
	assert.Equal(t, map[string]string{
		"traced":    "1-67891233-abcdef012345678912345678",
		"untraced":  "1-5759e988-bd862e3fe1be46a994272793",
		"malformed": "1-5759e988-bd862e3fe1be46a994272793",
	}, got, "each record's trace id")
	assert.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "malformed"}}, resp.BatchItemFailures, "batch item failures")
}
