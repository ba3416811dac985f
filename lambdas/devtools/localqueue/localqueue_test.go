package localqueue_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynastack/dynastack/lambdas/devtools/localqueue"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run drives a mapping until ok or 5 s, and returns the records seen.
func run(t *testing.T, q *localqueue.Queue, h localqueue.Handler, ok func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	m := &localqueue.Mapping{Queue: q, Handler: h, BatchSize: 10, MaxConcurrency: 2, Timeout: time.Second}
	go func() { m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, ok, 5*time.Second, 5*time.Millisecond, "condition not reached in 5 s")
}

func TestRedriveAfterMaxReceives(t *testing.T) {
	dlq := localqueue.NewQueue("dlq", time.Minute)
	q := localqueue.NewQueue("q", 20*time.Millisecond)
	q.MaxReceiveCount, q.DLQ = 3, dlq
	q.Send("poison", map[string]string{"k": "v"})
	var mu sync.Mutex
	var counts []string
	run(t, q, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		var resp events.SQSEventResponse
		for _, r := range ev.Records {
			counts = append(counts, r.Attributes["ApproximateReceiveCount"])
			_, ok := ctx.Deadline()
			assert.True(t, ok, "invocation without a deadline")
			assert.Equal(t, "aws:sqs", r.EventSource, "record %+v", r)
			assert.Equal(t, "v", *r.MessageAttributes["k"].StringValue, "record %+v", r)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
		return resp, nil
	}, func() bool { return dlq.Len() == 1 })
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"1", "2", "3"}, counts, "receive counts; want 1,2,3 then the DLQ")
	assert.Zero(t, q.Len(), "messages left in the queue")
}

// Only reported records stay; an invocation error or an unknown id keeps
// the whole batch.
func TestBatchItemFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    func(ev events.SQSEvent) (events.SQSEventResponse, error)
		left int
	}{
		{"one reported", func(ev events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ev.Records[0].MessageId}}}, nil
		}, 1},
		{"none reported", func(ev events.SQSEvent) (events.SQSEventResponse, error) { return events.SQSEventResponse{}, nil }, 0},
		{"invocation error", func(ev events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, errors.New("boom")
		}, 3},
		{"unknown id", func(ev events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "nope"}}}, nil
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := localqueue.NewQueue("q", time.Hour) // no redelivery within the test
			for i := 0; i < 3; i++ {
				q.Send("m"+strconv.Itoa(i), nil)
			}
			var mu sync.Mutex
			returned := false
			run(t, q, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				assert.Len(t, ev.Records, 3, "batch")
				defer func() { mu.Lock(); returned = true; mu.Unlock() }()
				return tc.h(ev)
			}, func() bool {
				mu.Lock()
				done := returned
				mu.Unlock()
				if !done {
					return false
				}
				time.Sleep(20 * time.Millisecond) // the deletes after the invocation
				return q.Len() == tc.left
			})
		})
	}
}

// A message sent with a trace header carries it as the record's
// AWSTraceHeader (also after the move to the dead-letter queue), and the
// invocation of a batch with it runs in that trace.
func TestTraceHeader(t *testing.T) {
	const header = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"
	dlq := localqueue.NewQueue("dlq", time.Minute)
	q := localqueue.NewQueue("q", 20*time.Millisecond)
	q.MaxReceiveCount, q.DLQ = 1, dlq
	q.SendTraced("traced", nil, header)
	var mu sync.Mutex
	var seen []string // record trace header, then the invocation's trace id
	run(t, q, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, ev.Records, 1, "batch")
		seen = append(seen, ev.Records[0].Attributes["AWSTraceHeader"], logx.TraceID(ctx))
		return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ev.Records[0].MessageId}}}, nil
	}, func() bool { return dlq.Len() == 1 })
	mu.Lock()
	assert.Equal(t, []string{header, "1-67891233-abcdef012345678912345678"}, seen, "record's AWSTraceHeader and the invocation's trace id")
	mu.Unlock()

	// The dead-letter queue's record still has it, and a batch of it and
	// an untraced message runs in its trace.
	dlq.Send("untraced", nil)
	var got []events.SQSMessage
	var traces []string
	run(t, dlq, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range ev.Records {
			got = append(got, r)
			traces = append(traces, logx.TraceID(ctx))
		}
		return events.SQSEventResponse{}, nil
	}, func() bool { return dlq.Len() == 0 })
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2, "records of the dead-letter queue")
	assert.Equal(t, header, got[0].Attributes["AWSTraceHeader"], "moved record's AWSTraceHeader")
	assert.NotContains(t, got[1].Attributes, "AWSTraceHeader", "untraced record's attributes")
	assert.Equal(t, []string{"1-67891233-abcdef012345678912345678", "1-67891233-abcdef012345678912345678"}, traces, "invocation trace of the batch")
}

// A disabled mapping receives nothing: the message waits and its age, as
// SQS publishes it, grows; enabled again, the mapping delivers it.
func TestDisabledMapping(t *testing.T) {
	q := localqueue.NewQueue("q", time.Second)
	var mu sync.Mutex
	got := 0
	m := &localqueue.Mapping{Queue: q, BatchSize: 10, Timeout: time.Second, Handler: func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		got += len(ev.Records)
		return events.SQSEventResponse{}, nil
	}}
	m.SetEnabled(false)
	require.False(t, m.Enabled())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	q.Send("waits", nil)
	time.Sleep(300 * time.Millisecond)
	visible, oldest := q.Stats()
	assert.Equal(t, 1, visible, "visible while the mapping is disabled")
	assert.GreaterOrEqual(t, oldest, 250*time.Millisecond, "the waiting message's age")
	mu.Lock()
	assert.Zero(t, got, "records delivered while disabled")
	mu.Unlock()
	m.SetEnabled(true)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return got == 1 }, 2*time.Second, 10*time.Millisecond, "delivered once enabled")
	require.Eventually(t, func() bool { return q.Len() == 0 }, time.Second, 10*time.Millisecond, "deleted after the delivery")
}
