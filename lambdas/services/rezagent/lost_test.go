package rezagent_test

import (
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	platformservice "github.com/dynastack/dynastack/lambdas/platform/service"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
)

// Status changes whose answer DynamoDB lost after applying them: the
// change answers 200 as the first attempt would have (not 409), and a
// redelivery's processing → processing counts one retry, not two.
func TestStatusChangeWithLostAnswer(t *testing.T) {
	s := newService(t, options{})
	m := s.create(t, "scheduled_hello", `{"text":"x"}`)
	client, proxy := servicetest.FaultyClient(t, "rezagent")
	lossy := s.Service
	lossy.H = rezagent.NewHandler(rezagent.Config{Table: s.Table, Stage: "dev", Common: platformservice.Common{
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
