package stak_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// service is a Stak API and stream consumer on a fresh table created from
// the stack's golden template (streams and TTL enabled as deployed).
type service struct {
	// h is the API behind a stand-in for API Gateway's JWT authorizer that
	// lets every end-user request in as the user its path names (the
	// token cases are TestAuthorization's, with real tokens).
	h        http.Handler
	api      http.Handler
	consumer *stak.Consumer
	client   *dynamodb.Client
	table    string
	clock    *apitest.Clock
}

// newService builds the service; with a meter, its requests are counted.
func newService(t testing.TB, meter ...*ddbrecord.Recorder) *service {
	t.Helper()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "stak"))
	table := names["InboxA8E05DC3"]
	if table == "" {
		t.Fatalf("no InboxA8E05DC3 in %v", names)
	}
	cfg, err := stak.ConfigFromEnv(func(k string) string { return map[string]string{stak.EnvTable: table}[k] })
	if err != nil {
		t.Fatal(err)
	}
	// Each reading advances the clock a millisecond, so that message ids of
	// one test are strictly ordered.
	c := apitest.NewClock(time.Now(), time.Millisecond)
	// The handler's and the consumer's clients are recorded as their
	// functions' (testenv.Main); fixtures and assertions use their own.
	client := testenv.Client(t)
	cfg.Client = testenv.ServiceClient(t, "stak")
	if len(meter) > 0 {
		cfg.Client = meter[0].Client(testenv.ServiceClient(t, "stak"))
	}
	cfg.Now = c.Now
	if !testing.Verbose() {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	consumerCfg := cfg
	consumerCfg.Client = testenv.ServiceClient(t, "stak-stream")
	h := stak.NewHandler(cfg)
	return &service{h: asPathUser(h), api: h, consumer: stak.NewConsumerFromConfig(consumerCfg), client: client, table: table, clock: c}
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

func (s *service) do(t testing.TB, method, path, body string) apitest.Response {
	t.Helper()
	return apitest.Do(t, s.h, method, path, body)
}

func (s *service) must(t testing.TB, status int, method, path, body string, out any) {
	t.Helper()
	r := s.do(t, method, path, body)
	if r.Status != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Body, status)
	}
	if out != nil {
		r.JSON(t, out)
	}
}

// setup creates tenant "acme" and inbox "main" (short-lived category
// "flash": 60s).
func (s *service) setup(t testing.TB) {
	t.Helper()
	s.must(t, 200, "PUT", "/tenants/acme/settings", `{"title":"Acme","ttl":"10d"}`, nil)
	s.must(t, 200, "PUT", "/tenants/acme/inboxes/main", `{"title":"Main","description":"","ttl":{"default":"7d","flash":"60s"}}`, nil)
}

func (s *service) publish(t testing.TB, body string) stak.Published {
	t.Helper()
	var p stak.Published
	s.must(t, 201, "POST", "/tenants/acme/inboxes/main/messages", body, &p)
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
	s.must(t, 200, "GET", "/tenants/acme/inboxes/main/users/"+uid+"/stats", "", &st)
	return st
}

func (s *service) count(t testing.TB) int {
	t.Helper()
	out, err := s.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

func wantCounts(t testing.TB, what string, got stak.Counts, published, read int64) {
	t.Helper()
	if got.Published != published || got.Read != read || got.Unread != max(0, published-read) {
		t.Errorf("%s = %+v, want published %d read %d", what, got, published, read)
	}
}
