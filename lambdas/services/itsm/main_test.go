package itsm_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// service is an ITSM API on fresh tables created from the stack template,
// configured from the template's function environment, as in AWS.
type service struct {
	h      http.Handler
	client *dynamodb.Client
	table  string
	tmpl   *cfntables.Template
}

type options struct {
	now   func() time.Time
	tmpl  *cfntables.Template // edited template; default: the stack template
	newID func() string
}

func newService(t testing.TB, opts options) *service {
	t.Helper()
	tmpl := opts.tmpl
	if tmpl == nil {
		var err error
		if tmpl, err = cfntables.Load(testenv.Template(t, "dev", "itsm")); err != nil {
			t.Fatal(err)
		}
	}
	names := testenv.CreateTables(t, tmpl)
	env := testenv.ServiceEnv(t, tmpl, names, "itsm")
	cfg, err := itsm.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	// The handler's client is recorded as the function's (testenv.Main);
	// fixtures and assertions use their own.
	client := testenv.Client(t)
	cfg.Client = testenv.ServiceClient(t, "itsm")
	cfg.Now = opts.now
	cfg.NewID = opts.newID
	if !testing.Verbose() {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &service{h: itsm.NewHandler(cfg), client: client, table: cfg.Table, tmpl: tmpl}
}

func (s *service) do(t testing.TB, method, path, body string) apitest.Response {
	t.Helper()
	return apitest.Do(t, s.h, method, path, body)
}

func (s *service) create(t testing.TB, caller, desc string) itsm.Ticket {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"caller_id": caller, "issue_description": desc})
	r := s.do(t, "POST", "/tickets", string(b))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var tk itsm.Ticket
	r.JSON(t, &tk)
	return tk
}

func timeNow() time.Time { return time.Now() }
