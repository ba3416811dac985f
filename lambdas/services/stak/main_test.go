package stak_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/platform/testenv"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// service is a Stak API and stream consumer on a fresh table created from
// the stack's golden template (streams and TTL enabled as deployed).
type service struct {
	h        http.Handler
	consumer *stak.Consumer
	client   *dynamodb.Client
	table    string
	clock    *clock
}

func newService(t testing.TB) *service {
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
	c := &clock{t: time.Now()}
	client := testenv.Client(t)
	cfg.Client = client
	cfg.Now = c.now
	if !testing.Verbose() {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &service{h: stak.NewHandler(cfg), consumer: stak.NewConsumerFromConfig(cfg), client: client, table: table, clock: c}
}

// clock is a settable clock; each reading advances it by a millisecond so
// that message ids of one test are strictly ordered.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

type response struct {
	status int
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response %d %s: %v", r.status, r.body, err)
	}
}

func (s *service) do(t testing.TB, method, path, body string) response {
	t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	return response{status: w.Code, body: w.Body.Bytes()}
}

func (s *service) must(t testing.TB, status int, method, path, body string, out any) {
	t.Helper()
	r := s.do(t, method, path, body)
	if r.status != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, status)
	}
	if out != nil {
		r.json(t, out)
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
