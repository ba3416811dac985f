package rezagent_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/ntfysink"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/ntfy"
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
		lossy.Must(t, 200, "PATCH", "/messages/"+m.MessageID, `{"status":"processing"}`, &got)
		if proxy.Requests()-before < 2 {
			t.Fatalf("change %d: the lost answer was not retried", i)
		}
		var stored rezagent.Message
		s.Must(t, 200, "GET", "/messages/"+m.MessageID, "", &stored)
		if got.Status != rezagent.StatusProcessing || stored.RetryCount != want || got.RetryCount != want {
			t.Errorf("change %d: answered %s retry %d, stored retry %d; want retry %d", i, got.Status, got.RetryCount, stored.RetryCount, want)
		}
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
	if err != nil || got.Status != rezagent.StatusProcessing || got.LeaseToken != "delivery-1" {
		t.Fatalf("claim with a lost answer: %+v, %v; want the delivery's own lease", got, err)
	}
	if proxy.Requests() != 2 {
		t.Fatalf("%d requests: the lost answer was not retried", proxy.Requests())
	}
	// Another delivery still finds the lease held.
	if _, err := store.Claim(t.Context(), m.MessageID, "delivery-2", time.Now().Add(time.Minute)); !errors.Is(err, rezagent.ErrBusy) {
		t.Errorf("a second delivery's claim: %v, want ErrBusy", err)
	}

	// The lease ends; a redelivery's claim whose answer is lost counts one
	// retry.
	m2 := s.create(t, "scheduled_hello", `{"text":"y"}`)
	if _, err := store.Claim(t.Context(), m2.MessageID, "d1", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	proxy.Next(ddbfault.DropAnswer, 1)
	got, err = store.Claim(t.Context(), m2.MessageID, "d2", time.Now().Add(time.Minute))
	if err != nil || got.LeaseToken != "d2" || got.RetryCount != 1 {
		t.Errorf("claim of an expired lease with a lost answer: %+v, %v; want d2's lease and one retry", got, err)
	}
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
		if err != nil || len(resp.BatchItemFailures) != 1 {
			t.Errorf("receive %d under a throttle: %+v %v, want the record handed back", receives, resp, err)
		}
	}
	var stored rezagent.Message
	s.Must(t, 200, "GET", "/messages/"+m.MessageID, "", &stored)
	if stored.Status != rezagent.StatusCreated || len(sink.Notifications()) != 0 {
		t.Errorf("after the throttle: status %s, %d notifications; want created and none", stored.Status, len(sink.Notifications()))
	}
}
