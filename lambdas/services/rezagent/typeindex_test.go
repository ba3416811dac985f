package rezagent_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
)

// newProdService is the API as prod deploys it: tables from the prod
// golden template (with message_type-created_date-index) and the
// configuration from the template's environment of the API function, so
// the stage's EnvTypeIndex and the grant the recorded calls are checked
// against are prod's.
func newProdService(t testing.TB) *service {
	t.Helper()
	tmpl, err := cfntables.Load(testenv.Template(t, "prod", "rezagent"))
	if err != nil {
		t.Fatal(err)
	}
	s := servicetest.Start(t, "rezagent", tmpl)
	cfg := servicetest.Config(t, rezagent.ConfigFromEnv, s.Env(t, "rezagent"))
	if !cfg.TypeIndex || cfg.Stage != "prod" {
		t.Fatalf("prod template: TypeIndex %v, stage %q; want the type index on in prod", cfg.TypeIndex, cfg.Stage)
	}
	c := apitest.NewClock(epoch, time.Millisecond)
	cfg.Client, cfg.Logger, cfg.Now, cfg.CursorKey = servicetest.FunctionClient(t, "rezagent"), servicetest.Logger(), c.Now, []byte("test-key")
	cfg.Topic = "" // no pipeline here: messages stay created
	s.H = rezagent.NewHandler(cfg)
	return &service{Service: s, clock: c}
}

func TestListAndCountByType(t *testing.T) {
	s := newProdService(t)
	var hello, manual []string
	for i := range 3 {
		hello = append(hello, s.create(t, "scheduled_hello", `{"text":"hello world"}`).MessageID)
		if i < 2 {
			manual = append(manual, s.create(t, "manual_notification", `{"text":"deploy"}`).MessageID)
		}
	}
	s.create(t, "deployment_notification", `{"sha":"abc"}`)
	// One hello completed, one failed: the type's metrics tally them.
	for _, id := range hello[:2] {
		s.Must(t, 200, "PATCH", "/messages/"+id, `{"status":"processing"}`, nil)
	}
	s.Must(t, 200, "PATCH", "/messages/"+hello[0], `{"status":"completed"}`, nil)
	s.Must(t, 200, "PATCH", "/messages/"+hello[1], `{"status":"failed","error_message":"ntfy 500"}`, nil)

	ids := func(p rezagent.Page) string {
		var out []string
		for _, m := range p.Messages {
			out = append(out, m.MessageID)
		}
		return strings.Join(out, ",")
	}
	var p rezagent.Page
	s.Must(t, 200, "GET", "/messages?message_type=scheduled_hello", "", &p)
	if got, want := ids(p), hello[2]+","+hello[1]+","+hello[0]; got != want {
		t.Errorf("scheduled_hello = %s, want %s (newest first)", got, want)
	}
	// Paged by the type index, cursor bound to it.
	s.Must(t, 200, "GET", "/messages?message_type=manual_notification&limit=1", "", &p)
	if ids(p) != manual[1] || p.Next == "" {
		t.Fatalf("first page %s next %q", ids(p), p.Next)
	}
	s.Must(t, 200, "GET", "/messages?message_type=manual_notification&limit=1&cursor="+p.Next, "", &p)
	if ids(p) != manual[0] {
		t.Errorf("second page %s", ids(p))
	}
	s.Must(t, 200, "GET", "/messages?message_type=manual_notification&limit=1", "", &p)
	if r := s.Do(t, "GET", "/messages?message_type=scheduled_hello&limit=1&cursor="+p.Next, ""); r.Status != http.StatusBadRequest {
		t.Errorf("cursor of another type: %d %s", r.Status, r.Body)
	}
	s.Must(t, 200, "GET", "/messages?message_type=reminder", "", &p)
	if len(p.Messages) != 0 {
		t.Errorf("unknown type lists %s", ids(p))
	}

	var m rezagent.Metrics
	s.Must(t, 200, "GET", "/metrics?message_type=scheduled_hello", "", &m)
	if m.MessageType != "scheduled_hello" || m.Total != 3 || m.Counts[rezagent.StatusCompleted] != 1 || m.Counts[rezagent.StatusFailed] != 1 ||
		m.Counts[rezagent.StatusCreated] != 1 || m.SuccessRate == nil || *m.SuccessRate != 0.5 || len(m.Recent) != 3 || m.ByType != nil {
		t.Errorf("scheduled_hello metrics = %+v", m)
	}
	s.Must(t, 200, "GET", "/metrics", "", &m)
	if m.Total != 6 || m.ByType["scheduled_hello"] != 3 || m.ByType["manual_notification"] != 2 || len(m.ByType) != 2 {
		t.Errorf("metrics = total %d by_type %v", m.Total, m.ByType)
	}

	for _, tc := range []struct{ name, path string }{
		{"status and type", "/messages?status=created&message_type=scheduled_hello"},
		{"empty type", "/messages?message_type="},
		{"type with space", "/messages?message_type=a%20b"},
		{"type twice", "/messages?message_type=a&message_type=b"},
		{"metrics empty type", "/metrics?message_type="},
	} {
		if r := s.Do(t, "GET", tc.path, ""); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "message_type") {
			t.Errorf("%s: %d %s, want 400 naming message_type", tc.name, r.Status, r.Body)
		}
	}
}

// Where the stage does not deploy the index (dev), a type is a 400 that
// says so, before any read.
func TestByTypeWithoutTheIndex(t *testing.T) {
	s := newService(t, options{})
	for _, path := range []string{"/messages?message_type=scheduled_hello", "/metrics?message_type=scheduled_hello"} {
		r := s.Do(t, "GET", path, "")
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "message_type-created_date-index") {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	var m rezagent.Metrics
	s.Must(t, 200, "GET", "/metrics", "", &m)
	if m.ByType != nil {
		t.Errorf("by_type without the index: %v", m.ByType)
	}
}
