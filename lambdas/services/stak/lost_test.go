package stak_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.Equal(t, 1, proxy.Faults(), "answers dropped: a transaction's")
	for _, uid := range []string{"u1", "u2"} {
		assert.Len(t, s.feed(t, uid, "").Messages, 1, "%s: messages", uid)
		assert.Equal(t, int64(1), s.stats(t, uid).Unread, "%s: unread", uid)
	}
}
