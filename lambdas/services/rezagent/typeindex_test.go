package rezagent_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newProdService is the API as prod deploys it: tables from the prod
// golden template (with message_type-created_date-index) and the
// configuration from the template's environment of the API function, so
// the stage's EnvTypeIndex and the grant the recorded calls are checked
// against are prod's.
func newProdService(t testing.TB) *service {
	t.Helper()
	tmpl, err := cfntables.Load(testenv.Template(t, "prod", "rezagent"))
	require.NoError(t, err)
	s := servicetest.Start(t, "rezagent", tmpl)
	cfg := servicetest.Config(t, rezagent.ConfigFromEnv, s.Env(t, "rezagent"))
	require.True(t, cfg.TypeIndex, "prod template: want the type index on in prod")
	require.Equal(t, "prod", cfg.Stage, "prod template: stage")
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
		s.MustRoute(t, 200, contract.SetStatus, `{"status":"processing"}`, nil, id)
	}
	s.MustRoute(t, 200, contract.SetStatus, `{"status":"completed"}`, nil, hello[0])
	s.MustRoute(t, 200, contract.SetStatus, `{"status":"failed","error_message":"ntfy 500"}`, nil, hello[1])

	ids := func(p rezagent.Page) []string {
		var out []string
		for _, m := range p.Messages {
			out = append(out, m.MessageID)
		}
		return out
	}
	var p rezagent.Page
	s.Must(t, 200, contract.ListMessages.Method, contract.ListMessages.URLQuery(svc.Values{contract.ParamMessageType: "scheduled_hello"}), "", &p)
	assert.Equal(t, []string{hello[2], hello[1], hello[0]}, ids(p), "scheduled_hello, newest first")
	// Paged by the type index, cursor bound to it.
	s.Must(t, 200, contract.ListMessages.Method, contract.ListMessages.URLQuery(svc.Values{contract.ParamMessageType: "manual_notification", svc.Limit: "1"}), "", &p)
	require.Equal(t, []string{manual[1]}, ids(p), "first page")
	require.NotEmpty(t, p.Next, "first page: next")
	s.Must(t, 200, contract.ListMessages.Method, contract.ListMessages.URL()+"?message_type=manual_notification&limit=1&cursor="+p.Next, "", &p)
	assert.Equal(t, []string{manual[0]}, ids(p), "second page")
	s.Must(t, 200, contract.ListMessages.Method, contract.ListMessages.URLQuery(svc.Values{contract.ParamMessageType: "manual_notification", svc.Limit: "1"}), "", &p)
	r := s.Do(t, contract.ListMessages.Method, contract.ListMessages.URL()+"?message_type=scheduled_hello&limit=1&cursor="+p.Next, "")
	assert.Equal(t, http.StatusBadRequest, r.Status, "cursor of another type: %s", r.Body)
	s.Must(t, 200, contract.ListMessages.Method, contract.ListMessages.URLQuery(svc.Values{contract.ParamMessageType: "reminder"}), "", &p)
	assert.Empty(t, p.Messages, "unknown type lists")

	var m rezagent.Metrics
	s.Must(t, 200, contract.Metrics.Method, contract.Metrics.URLQuery(svc.Values{contract.ParamMessageType: "scheduled_hello"}), "", &m)
	assert.Equal(t, "scheduled_hello", m.MessageType, "scheduled_hello metrics: type")
	assert.Equal(t, 3, m.Total, "scheduled_hello metrics: total")
	assert.Equal(t, 1, m.Counts[rezagent.StatusCompleted], "scheduled_hello metrics: completed")
	assert.Equal(t, 1, m.Counts[rezagent.StatusFailed], "scheduled_hello metrics: failed")
	assert.Equal(t, 1, m.Counts[rezagent.StatusCreated], "scheduled_hello metrics: created")
	if assert.NotNil(t, m.SuccessRate, "scheduled_hello metrics: success rate") {
		assert.Equal(t, 0.5, *m.SuccessRate, "scheduled_hello metrics: success rate")
	}
	assert.Len(t, m.Recent, 3, "scheduled_hello metrics: recent")
	assert.Nil(t, m.ByType, "scheduled_hello metrics: by_type")
	s.MustRoute(t, 200, contract.Metrics, "", &m)
	assert.Equal(t, 6, m.Total, "metrics: total")
	assert.Equal(t, map[string]int{"scheduled_hello": 3, "manual_notification": 2}, m.ByType, "metrics: by_type")

	for _, tc := range []struct{ name, path string }{
		{"status and type", contract.ListMessages.URLQuery(svc.Values{contract.ParamStatus: "created", contract.ParamMessageType: "scheduled_hello"})},
		{"empty type", contract.ListMessages.URL() + "?message_type="},
		{"type with space", contract.ListMessages.URL() + "?message_type=a%20b"},
		{"type twice", contract.ListMessages.URL() + "?message_type=a&message_type=b"},
		{"metrics empty type", contract.Metrics.URL() + "?message_type="},
	} {
		r := s.Do(t, "GET", tc.path, "")
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", tc.name, r.Body)
		assert.Contains(t, string(r.Body), "message_type", "%s: want 400 naming message_type", tc.name)
	}
}

// Where the stage does not deploy the index (dev), a type is a 400 that
// says so, before any read.
func TestByTypeWithoutTheIndex(t *testing.T) {
	s := newService(t, options{})
	for _, path := range []string{contract.ListMessages.URLQuery(svc.Values{contract.ParamMessageType: "scheduled_hello"}), contract.Metrics.URLQuery(svc.Values{contract.ParamMessageType: "scheduled_hello"})} {
		r := s.Do(t, "GET", path, "")
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", path, r.Body)
		assert.Contains(t, string(r.Body), "message_type-created_date-index", "%s", path)
	}
	var m rezagent.Metrics
	s.MustRoute(t, 200, contract.Metrics, "", &m)
	assert.Nil(t, m.ByType, "by_type without the index")
}
