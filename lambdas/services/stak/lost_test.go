package stak_test

import (
	"testing"

	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/services/stak"
	"github.com/dynastack/dynastack/lambdas/services/stak/stakapi"
)

// A publish whose transaction DynamoDB applied but whose answer was lost
// is answered 201 and delivered once per user: the SDK's client request
// token makes the retried transaction DynamoDB's no-op, and the counters
// count it once.
func TestPublishWithLostAnswer(t *testing.T) {
	s := newService(t)
	s.setup(t)
	client, proxy := servicetest.FaultyClient(t, "stak")
	cfg := servicetest.Config(t, stak.ConfigFromEnv, map[string]string{stakcontract.EnvTable: s.Table})
	cfg.Client, cfg.Now, cfg.Logger = client, s.clock.Now, servicetest.Logger()
	lossy := *s
	lossy.H = asPathUser(stakapi.NewHandler(cfg))

	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	lossy.toUsers(t, "deploy done", "ops", "u1", "u2")
	if proxy.Faults() != 1 {
		t.Fatalf("%d answers dropped, want a transaction's", proxy.Faults())
	}
	for _, uid := range []string{"u1", "u2"} {
		if got := s.feed(t, uid, ""); len(got.Messages) != 1 {
			t.Errorf("%s has %d messages, want 1", uid, len(got.Messages))
		}
		if st := s.stats(t, uid); st.Unread != 1 {
			t.Errorf("%s: %+v, want 1 unread", uid, st)
		}
	}
}
