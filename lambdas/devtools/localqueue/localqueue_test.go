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
