package nucleus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/platform/testenv"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// endpoint is the DynamoDB Local the tests use, for the Example (which has
// no testing.TB to ask testenv with).
var endpoint string

// service is a Nucleus API on fresh tables created from the dev golden
// template, configured from the environment variables as in AWS.
type service struct {
	h      http.Handler
	client *dynamodb.Client
	tables nucleus.Tables
}

type options struct {
	now        func() time.Time
	newEntryID func(time.Time) string
}

// tableNames creates both tables and returns them by role.
func tableNames(t testing.TB) nucleus.Tables {
	t.Helper()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "nucleus"))
	var tables nucleus.Tables
	for id, name := range names {
		switch {
		case strings.HasPrefix(id, "App"):
			tables.App = name
		case strings.HasPrefix(id, "Audit"):
			tables.Audit = name
		}
	}
	if tables.App == "" || tables.Audit == "" {
		t.Fatalf("template tables %v: want App… and Audit…", names)
	}
	return tables
}

func newService(t testing.TB, opts options) *service {
	t.Helper()
	endpoint = testenv.Endpoint(t)
	tables := tableNames(t)
	env := map[string]string{nucleus.EnvAppTable: tables.App, nucleus.EnvAuditTable: tables.Audit}
	cfg, err := nucleus.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	client := testenv.Client(t)
	cfg.Client = client
	cfg.Now = opts.now
	cfg.NewEntryID = opts.newEntryID
	if !testing.Verbose() {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &service{h: nucleus.NewHandler(cfg), client: client, tables: cfg.Tables}
}

// clock is a deterministic clock advancing by step on each call; set moves
// it.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

// newClock starts at the real time: DynamoDB Local runs TTL deletion, so
// audit entries written "in the past" would vanish under the tests.
func newClock(step time.Duration) *clock {
	return &clock{t: time.Now().UTC(), step: step}
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
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

const testUser = "alice@example.com"

// do sends a request as testUser.
func (s *service) do(t testing.TB, method, path, body string) response {
	t.Helper()
	return s.doAs(t, testUser, method, path, body)
}

// doAs sends a request with X-User-Id user ("" for none).
func (s *service) doAs(t testing.TB, user, method, path, body string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if user != "" {
		req.Header.Set(nucleus.HeaderUserID, user)
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	return response{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

// must sends a request and fails unless it answers status; it decodes the
// body into v when v is not nil.
func (s *service) must(t testing.TB, status int, method, path, body string, v any) {
	t.Helper()
	r := s.do(t, method, path, body)
	if r.status != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, status)
	}
	if v != nil {
		r.json(t, v)
	}
}

// wantError checks an error response: status, code, and (when given) the
// field named in the body and a fragment of the message.
func wantError(t *testing.T, r response, status int, code, field, inMessage string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	var e errorBody
	r.json(t, &e)
	if e.Error.Code != code {
		t.Errorf("code = %q, want %q (%s)", e.Error.Code, code, r.body)
	}
	if e.RequestID == "" || e.RequestID != r.header.Get("X-Request-Id") {
		t.Errorf("request_id %q does not match header %q", e.RequestID, r.header.Get("X-Request-Id"))
	}
	if field != "" {
		found := false
		for _, f := range e.Error.Fields {
			found = found || f.Field == field
		}
		if !found || !strings.Contains(e.Error.Message, field) {
			t.Errorf("error does not name field %q: %s", field, r.body)
		}
	}
	if inMessage != "" && !strings.Contains(e.Error.Message, inMessage) {
		t.Errorf("message %q does not contain %q", e.Error.Message, inMessage)
	}
}

// items returns every item of table, read consistently.
func (s *service) items(t *testing.T, table string) []map[string]any {
	t.Helper()
	out, err := s.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		t.Fatal(err)
	}
	return items
}

// counts returns the number of items in the app and audit tables.
func (s *service) counts(t *testing.T) (app, audit int) {
	t.Helper()
	return len(s.items(t, s.tables.App)), len(s.items(t, s.tables.Audit))
}

// wantCounts checks that the tables hold app and audit items.
func (s *service) wantCounts(t *testing.T, app, audit int) {
	t.Helper()
	if a, b := s.counts(t); a != app || b != audit {
		t.Errorf("tables hold %d app and %d audit items, want %d and %d", a, b, app, audit)
	}
}

func roleARN(account string) string { return "arn:aws:iam::" + account + ":role/NucleusRole" }

func ec2ARN(account string, n int) string {
	return fmt.Sprintf("arn:aws:ec2:us-east-1:%s:instance/i-%017x", account, n)
}

func (s *service) createAccount(t testing.TB, id, name, status string) nucleus.Account {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"account_id": id, "account_name": name, "role_arn": roleARN(id), "status": status})
	var a nucleus.Account
	s.must(t, http.StatusCreated, "POST", "/accounts", string(b), &a)
	return a
}

func (s *service) createSchedule(t testing.TB, name string) nucleus.Schedule {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"schedule_name": name, "start_cron": "0 8 * * MON-FRI", "end_cron": "0 18 * * MON-FRI",
		"timezone": "Europe/Berlin", "enabled": true})
	var sc nucleus.Schedule
	s.must(t, http.StatusCreated, "POST", "/schedules", string(b), &sc)
	return sc
}

func resourceBody(account, arn string) string {
	b, _ := json.Marshal(map[string]string{"resource_arn": arn, "resource_type": "ec2", "region": "us-east-1", "account_id": account})
	return string(b)
}

type auditPage struct {
	Entries    []nucleus.AuditEntry `json:"entries"`
	NextCursor string               `json:"next_cursor"`
}

func (s *service) audit(t testing.TB, path string) auditPage {
	t.Helper()
	var p auditPage
	s.must(t, http.StatusOK, "GET", path, "", &p)
	return p
}
