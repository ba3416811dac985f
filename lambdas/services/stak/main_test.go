package stak_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services/stak"
	"github.com/dynastack/dynastack/lambdas/services/stak/stakapi"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// service is a Stak API and stream consumer on a fresh table created from
// the stack's golden template (streams and TTL enabled as deployed). Its H
// is the API behind a stand-in for API Gateway's JWT authorizer that lets
// every end-user request in as the user its path names (the token cases
// are TestAuthorization's, with real tokens).
type service struct {
	servicetest.Service
	api      http.Handler
	consumer *stak.Consumer
	clock    *apitest.Clock
}

// newService builds the service; with a meter, its requests are counted.
func newService(t testing.TB, meter ...*ddbrecord.Recorder) *service {
	t.Helper()
	s := servicetest.Start(t, "stak", nil)
	require.NotEmpty(t, s.Table, "want the one table InboxA8E05DC3, have %v", s.Tables)
	require.Equal(t, s.Tables["InboxA8E05DC3"], s.Table, "want the one table InboxA8E05DC3, have %v", s.Tables)
	cfg := servicetest.Config(t, stak.ConfigFromEnv, map[string]string{stakcontract.EnvTable: s.Table})
	// Each reading advances the clock a millisecond, so that message ids of
	// one test are strictly ordered.
	c := apitest.NewClock(time.Now(), time.Millisecond)
	cfg.Client = servicetest.FunctionClient(t, "stak")
	if len(meter) > 0 {
		cfg.Client = meter[0].Client(servicetest.FunctionClient(t, "stak"))
	}
	cfg.Now, cfg.Logger = c.Now, servicetest.Logger()
	consumerCfg := cfg
	consumerCfg.Client = servicetest.FunctionClient(t, "stak-stream")
	h := stakapi.NewHandler(cfg)
	s.H = asPathUser(h)
	return &service{Service: s, api: h, consumer: stak.NewConsumerFromConfig(consumerCfg), clock: c}
}

// asPathUser gives each end-user request (…/users/{uid}/…) the claims of
// that user's token, as API Gateway passes them after verifying it.
func asPathUser(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(r.URL.Path, "/")
		if len(parts) > 6 && parts[1] == "tenants" && parts[5] == "users" {
			r = r.WithContext(api.WithCaller(r.Context(), api.Caller{Subject: parts[6], Claims: map[string]string{"sub": parts[6], stak.ClaimTenant: parts[2]}}))
		}
		h.ServeHTTP(w, r)
	})
}

// setup creates tenant "acme" and inbox "main" (short-lived category
// "flash": 60s).
func (s *service) setup(t testing.TB) {
	t.Helper()
	s.Must(t, 200, stakcontract.PutTenant.Method, stakcontract.PutTenant.URL("acme"), `{"title":"Acme","ttl":"10d"}`, nil)
	s.Must(t, 200, stakcontract.PutInbox.Method, stakcontract.PutInbox.URL("acme", "main"), `{"title":"Main","description":"","ttl":{"default":"7d","flash":"60s"}}`, nil)
}

func (s *service) publish(t testing.TB, body string) stak.Published {
	t.Helper()
	var p stak.Published
	s.Must(t, 201, stakcontract.Publish.Method, stakcontract.Publish.URL("acme", "main"), body, &p)
	return p
}

func (s *service) toUsers(t testing.TB, title, category string, uids ...string) stak.Published {
	t.Helper()
	b, _ := json.Marshal(map[string]any{
		"sender": "admin", "audiences": map[string]any{"kind": "users", "uids": uids},
		"taxonomy": map[string]any{"category": category}, "message": map[string]any{"title": title, "body": map[string]any{"n": 1}},
	})
	return s.publish(t, string(b))
}

func (s *service) toEveryone(t testing.TB, title, category string) stak.Published {
	t.Helper()
	b, _ := json.Marshal(map[string]any{
		"sender": "admin", "audiences": map[string]any{"kind": "everyone", "label": "all"},
		"taxonomy": map[string]any{"category": category}, "message": map[string]any{"title": title, "body": "hello"},
	})
	return s.publish(t, string(b))
}

func (s *service) stats(t testing.TB, uid string) stak.Stats {
	t.Helper()
	var st stak.Stats
	s.Must(t, 200, stakcontract.Stats.Method, stakcontract.Stats.URL("acme", "main", uid), "", &st)
	return st
}

// counts are the counters of published messages of which read are read.
func counts(published, read int64) stak.Counts {
	return stak.Counts{Published: published, Read: read, Unread: max(0, published-read)}
}
