package rezagent_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/ntfy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Status changes whose answer DynamoDB lost after applying them: the
// change answers 200 as the first attempt would have (not 409), and a
// redelivery's processing → processing counts one retry, not two.
func TestStatusChangeWithLostAnswer(t *testing.T) {
	s := newService(t, options{})
	m := s.create(t, "scheduled_hello", `{"text":"x"}`)
	client, proxy := servicetest.FaultyClient(t, "rezagent")
	lossy := s.Service
	lossy.H = rezagent.NewHandler(rezagent.Config{Table: s.Table, Stage: "dev", Common: fn.Common{
		CursorKey: []byte("test-key"), Client: client, Logger: servicetest.Logger(), Now: s.clock.Now}})

	for i, want := range []int{0, 1} {
		proxy.Next(ddbfault.DropAnswer, 1)
		before := proxy.Requests()
		var got rezagent.Message
		lossy.MustRoute(t, 200, contract.SetStatus, `{"status":"processing"}`, &got, m.MessageID)
		require.GreaterOrEqual(t, proxy.Requests()-before, 2, "change %d: requests: the lost answer was not retried", i)
		var stored rezagent.Message
		s.MustRoute(t, 200, contract.GetMessage, "", &stored, m.MessageID)
		assert.Equal(t, rezagent.StatusProcessing, got.Status, "change %d: answered status", i)
		assert.Equal(t, want, stored.RetryCount, "change %d: stored retry count", i)
		assert.Equal(t, want, got.RetryCount, "change %d: answered retry count", i)
	}
}

// A claim whose answer was lost is the delivery's own: the processor goes
// on with the lease it holds instead of standing down before its own
// lease, and a retried claim of an expired lease counts the retry once.
func TestClaimWithLostAnswerIsOwn(t *testing.T) {
	s := newService(t, options{})
	m := s.create(t, "scheduled_hello", `{"text":"x"}`)
	client, proxy := servicetest.FaultyClient(t, "rezagent-processor")
	store := rezagent.NewStore(client, s.Table, "dev", []byte("k"))

	proxy.Next(ddbfault.DropAnswer, 1)
	got, err := store.Claim(t.Context(), m.MessageID, "delivery-1", time.Now().Add(time.Minute))
	require.NoError(t, err, "claim with a lost answer")
	require.Equal(t, rezagent.StatusProcessing, got.Status, "claim with a lost answer: status")
	require.Equal(t, "delivery-1", got.LeaseToken, "claim with a lost answer: want the delivery's own lease")
	require.Equal(t, 2, proxy.Requests(), "requests: the lost answer was not retried")
	// Another delivery still finds the lease held.
	_, err = store.Claim(t.Context(), m.MessageID, "delivery-2", time.Now().Add(time.Minute))
	assert.ErrorIs(t, err, rezagent.ErrBusy, "a second delivery's claim")

	// The lease ends; a redelivery's claim whose answer is lost counts one
	// retry.
	m2 := s.create(t, "scheduled_hello", `{"text":"y"}`)
	_, err = store.Claim(t.Context(), m2.MessageID, "d1", time.Now().Add(-time.Second))
	require.NoError(t, err)
	proxy.Next(ddbfault.DropAnswer, 1)
	got, err = store.Claim(t.Context(), m2.MessageID, "d2", time.Now().Add(time.Minute))
	require.NoError(t, err, "claim of an expired lease with a lost answer")
	assert.Equal(t, "d2", got.LeaseToken, "claim of an expired lease with a lost answer: want d2's lease")
	assert.Equal(t, 1, got.RetryCount, "claim of an expired lease with a lost answer: want one retry")
}

// A throttled table is never poison for the processor: on its last
// receive as on its first, a record whose claim DynamoDB throttled is
// handed back to SQS (a batch item failure), the message is not marked
// failed and nothing is sent.
func TestProcessorRetriesAThrottledTable(t *testing.T) {
	s := newService(t, options{})
	m := s.create(t, "scheduled_hello", `{"text":"x"}`)
	client, proxy := servicetest.FaultyClient(t, "rezagent-processor")
	sink := ntfysink.New("", nil)
	srv := httptest.NewServer(sink)
	defer srv.Close()
	proc := rezagent.NewProcessorFromConfig(rezagent.ProcessorConfig{
		Config:    rezagent.Config{Table: s.Table, Stage: "dev", Common: fn.Common{Client: client, Logger: servicetest.Logger()}},
		Ntfy:      &ntfy.Client{Server: srv.URL, HTTP: &http.Client{}},
		NtfyTopic: "rez-agent-dev", MaxReceiveCount: 2,
	})
	proxy.Set(ddbfault.Throttle, 1)
	for _, receives := range []int{1, 2} {
		resp, err := proc.Handle(t.Context(), events.SQSEvent{Records: []events.SQSMessage{{
			MessageId: "r1", Body: `{"message_id":"` + m.MessageID + `"}`,
			Attributes: map[string]string{"ApproximateReceiveCount": fmt.Sprint(receives)},
		}}})
		assert.NoError(t, err, "receive %d under a throttle", receives)
		assert.Len(t, resp.BatchItemFailures, 1, "receive %d under a throttle: want the record handed back", receives)
	}
	var stored rezagent.Message
	s.MustRoute(t, 200, contract.GetMessage, "", &stored, m.MessageID)
	assert.Equal(t, rezagent.StatusCreated, stored.Status, "after the throttle: status")
	assert.Empty(t, sink.Notifications(), "after the throttle: notifications")
}
