package itsm_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// service is an ITSM API on fresh tables created from the stack template,
// configured from the template's function environment, as in AWS.
type service struct{ servicetest.Service }

type options struct {
	now   func() time.Time
	tmpl  *cfntables.Template // edited template; default: the stack template
	newID func() string
	log   *slog.Logger // default: servicetest.Logger()
}

func newService(t testing.TB, opts options) *service {
	t.Helper()
	s := servicetest.Start(t, "itsm", opts.tmpl)
	cfg := servicetest.Config(t, itsm.ConfigFromEnv, s.Env(t, "itsm"))
	cfg.Client, cfg.Logger = servicetest.FunctionClient(t, "itsm"), servicetest.Logger()
	cfg.Now, cfg.NewID = opts.now, opts.newID
	if opts.log != nil {
		cfg.Logger = opts.log
	}
	s.H = itsm.NewHandler(cfg)
	return &service{s}
}

func (s *service) create(t testing.TB, caller, desc string) itsm.Ticket {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"caller_id": caller, "issue_description": desc})
	r := s.Do(t, contract.CreateTicket.Method, contract.CreateTicket.URL(), string(b))
	require.Equal(t, http.StatusCreated, r.Status, "create: %s", r.Body)
	var tk itsm.Ticket
	r.JSON(t, &tk)
	return tk
}

func timeNow() time.Time { return time.Now() }
