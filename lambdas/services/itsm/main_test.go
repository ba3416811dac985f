package itsm_test

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

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/platform/cfntables"
	"github.com/dynastack/dynastack/lambdas/platform/testenv"
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
	client := testenv.Client(t)
	cfg.Client = client
	cfg.Now = opts.now
	cfg.NewID = opts.newID
	if !testing.Verbose() {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &service{h: itsm.NewHandler(cfg), client: client, table: cfg.Table, tmpl: tmpl}
}

// clock is a deterministic clock advancing by step on each call.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response %d %s: %v", r.status, r.body, err)
	}
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Fields  []struct {
			Field, Message string
		} `json:"fields"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

func (s *service) do(t testing.TB, method, path, body string) response {
	t.Helper()
	var rd *bytes.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	var req *http.Request
	if rd != nil {
		req = httptest.NewRequest(method, path, rd)
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	req = req.WithContext(context.Background())
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	return response{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

func (s *service) create(t testing.TB, caller, desc string) itsm.Ticket {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"caller_id": caller, "issue_description": desc})
	r := s.do(t, "POST", "/tickets", string(b))
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var tk itsm.Ticket
	r.json(t, &tk)
	return tk
}

func timeNow() time.Time { return time.Now() }
