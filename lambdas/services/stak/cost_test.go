package stak_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/services/stak"
	"github.com/dynastack/dynastack/lambdas/services/stak/stakapi"
)

// cannedHandler is s's handler on client c, logging as in Lambda (JSON,
// info level) into io.Discard.
func cannedHandler(t testing.TB, s *service, c *dynamodb.Client) http.Handler {
	cfg := servicetest.Config(t, stak.ConfigFromEnv, map[string]string{stakcontract.EnvTable: s.Table})
	cfg.Client, cfg.Now, cfg.Logger = c, s.clock.Now, logx.New(io.Discard, slog.LevelInfo)
	return asPathUser(stakapi.NewHandler(cfg))
}

// recorded returns s with a handler whose DynamoDB calls rec records.
func recorded(t testing.TB, s *service) (*service, *ddbrecord.Recorder) {
	t.Helper()
	rec := &ddbrecord.Recorder{}
	cfg := servicetest.Config(t, stak.ConfigFromEnv, map[string]string{stakcontract.EnvTable: s.Table})
	cfg.Client = rec.Client(s.Client)
	cfg.Now = s.clock.Now
	cfg.Logger = slog.New(slog.DiscardHandler)
	r := *s
	r.api = stakapi.NewHandler(cfg)
	r.H = asPathUser(r.api)
	return &r, rec
}

// TestCost runs the cost cases in each mode (servicetest.Modes: Cost,
// LostAnswers, Throttled). Items here are under 1 KB;
// the table has no index.
func TestCost(t *testing.T) { servicetest.Modes(t, runCost) }

// BenchmarkAPI runs every operation of TestCost through the handler
// beside its raw SDK twin over recorded DynamoDB answers
// (servicetest.Canned; make bench).
func BenchmarkAPI(b *testing.B) { runCost(b, servicetest.Canned) }

func runCost(t testing.TB, mode servicetest.Mode) {
	base := newService(t)
	faults := base.Faults(t, "stak", mode)
	faults.Serve(func(c *dynamodb.Client) http.Handler { return cannedHandler(t, base, c) })
	s, rec := recorded(t, base)
	s.setup(t)
	mine := s.toUsers(t, "Yours", "news", "alice")
	public := s.toEveryone(t, "Everyone", "news")
	path := func(p string) func() string { return func() string { return p } }
	inbox := stakcontract.GetInbox.URL("acme", "main")
	rows := servicetest.Measure(t, s.H, rec, faults, []ddbrecord.Case{
		{Operation: "PUT /tenants/{tenant}/settings", Method: stakcontract.PutTenant.Method, Path: path(stakcontract.PutTenant.URL("acme")),
			Body: `{"title":"Acme","ttl":"10d"}`, Status: 200, Min: ddbrecord.Cost{Requests: 1, Write: 1}, Note: "one PutItem"},
		{Operation: "GET /tenants/{tenant}/settings", Method: stakcontract.GetTenant.Method, Path: path(stakcontract.GetTenant.URL("acme")), Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 1}, Note: "one strongly consistent GetItem"},
		{Operation: "PUT /tenants/{tenant}/inboxes/{inbox}", Method: "PUT", Path: path(inbox),
			Body: `{"title":"Main","description":"","ttl":{"default":"7d","flash":"60s"}}`, Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Write: 4}, Note: "one TransactWriteItems: the inbox put and a condition check that the tenant exists, each billed twice"},
		{Operation: "GET /tenants/{tenant}/inboxes/{inbox}", Method: "GET", Path: path(inbox), Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 1}, Note: "one strongly consistent GetItem"},
		{Operation: "POST …/messages (to 2 users)", Method: stakcontract.Publish.Method, Path: path(stakcontract.Publish.URL("acme", "main")),
			Body:   `{"sender":"admin","audiences":{"kind":"users","uids":["bob","carol"]},"taxonomy":{"category":"news"},"message":{"title":"Hi"}}`,
			Status: 201, Min: ddbrecord.Cost{Requests: 3, Read: 1, Write: 12}, Note: "a GetItem of the inbox (its TTL; 404 when unknown), then per user one TransactWriteItems: the message put only if new and two counter updates (`c#*`, `c#<category>`), billed twice: 6 WCU each"},
		{Operation: "POST …/messages (to everyone)", Method: stakcontract.Publish.Method, Path: path(stakcontract.Publish.URL("acme", "main")),
			Body:   `{"sender":"admin","audiences":{"kind":"everyone","label":"all"},"taxonomy":{"category":"news"},"message":{"title":"Hi all"}}`,
			Status: 201, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 6}, Note: "a GetItem of the inbox, then one TransactWriteItems: the public message and the two public counters"},
		{Operation: "GET …/users/{uid}/messages", Method: stakcontract.Feed.Method, Path: path(stakcontract.Feed.URL("acme", "main", "alice")), Status: 200,
			Min: ddbrecord.Cost{Requests: 3, Read: 3}, Note: "a GetItem of the inbox (an unknown inbox is a 404, not an empty feed), then two strongly consistent Queries, the user and the public partition, merged"},
		{Operation: "POST …/users/{uid}/messages/{id}/read (own message)", Method: stakcontract.MarkRead.Method,
			Path: func() string { return stakcontract.MarkRead.URL("acme", "main", "alice", mine.Header.ID) }, Status: 200,
			Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 6}, Note: "a GetItem of the message, then one TransactWriteItems: `readat` set only if unset, and the two read counters"},
		{Operation: "POST …/users/{uid}/messages/{id}/read (public message)", Method: stakcontract.MarkRead.Method,
			Path: func() string { return stakcontract.MarkRead.URL("acme", "main", "alice", public.Header.ID) }, Status: 200,
			Min: ddbrecord.Cost{Requests: 3, Read: 2, Write: 8}, Note: "a GetItem in the user partition (no receipt yet) and one in the public partition, then one TransactWriteItems: a check that the message exists, the receipt put only if new, the two read counters"},
		{Operation: "POST …/users/{uid}/messages/{id}/read (already read)", Method: stakcontract.MarkRead.Method,
			Path: func() string { return stakcontract.MarkRead.URL("acme", "main", "alice", mine.Header.ID) }, Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 1}, Note: "a GetItem of the message, which has `readat`: nothing is written"},
		{Operation: "POST …/users/{uid}/read-all", Method: stakcontract.ReadAll.Method, Path: func() string {
			s.toUsers(t, "One", "news", "alice")
			s.toUsers(t, "Two", "ops", "alice")
			rec.Reset()
			return stakcontract.ReadAll.URL("acme", "main", "alice")
		}, Body: `{}`, Status: 200, Min: ddbrecord.Cost{Requests: 3, Read: 2, Write: 10}, Note: "the inbox GetItem (decision 18: an unknown inbox is a 404, not nothing marked), the two feed Queries, and one TransactWriteItems for the two unread messages and the three read counters they touch, billed twice"},
		{Operation: "POST /admin/…/recount (public and one user)", Method: stakcontract.Recount.Method, Path: path(stakcontract.Recount.URL("acme", "main")),
			Body: `{"uid":"alice"}`, Status: 200, Min: ddbrecord.Cost{Requests: 5, Read: 5}, Note: "the inbox GetItem, then per partition (public, user) a Query of the `c#` counters and one of the `m#` items; nothing differs here, so nothing is written (one conditional UpdateItem per differing counter otherwise)"},
		{Operation: "GET …/users/{uid}/stats", Method: stakcontract.Stats.Method, Path: path(stakcontract.Stats.URL("acme", "main", "alice")), Status: 200,
			Min: ddbrecord.Cost{Requests: 3, Read: 3}, Note: "a GetItem of the inbox (404 when unknown), then two strongly consistent Queries of the `c#` counters, user and public"},
		{Operation: "GET /tenants/{tenant}/inboxes/{inbox}/stats", Method: stakcontract.PublicStats.Method, Path: path(stakcontract.PublicStats.URL("acme", "main")), Status: 200,
			Min: ddbrecord.Cost{Requests: 2, Read: 2}, Note: "a GetItem of the inbox (404 when unknown), then one strongly consistent Query of the public `c#` counters"},
		{Operation: "POST …/messages (to everyone, body checked by the inbox schema)", Method: stakcontract.Publish.Method, Path: func() string {
			s.MustRoute(t, 200, stakcontract.PutInbox, `{"title":"Main","description":"","ttl":{"default":"7d"},"schema":{"default":{"type":"object","required":["text"]}}}`, nil, "acme", "main")
			rec.Reset()
			return stakcontract.Publish.URL("acme", "main")
		}, Body: `{"sender":"admin","audiences":{"kind":"everyone"},"taxonomy":{"category":"news"},"message":{"title":"Hi all","body":{"text":"hello"}}}`,
			Status: 201, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 6}, Note: "as without a schema: the schema comes with the inbox GetItem, and the check costs no request"},
	})
	if mode == servicetest.Cost {
		ddbrecord.CheckServiceDoc(t, "stak", rows)
	}
}
