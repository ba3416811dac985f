package agenticpm_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/platform/testenv"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// service is the API on a fresh table created from the deployed template.
// The template has no function yet, so the environment is built here the
// way Table.Environment sets it.
type service struct {
	h      http.Handler
	client *dynamodb.Client
	table  string
}

func newService(t testing.TB, now func() time.Time) *service {
	t.Helper()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "agenticpm"))
	env := map[string]string{agenticpm.EnvTable: names["TableCD117FA1"]}
	cfg, err := agenticpm.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	client := testenv.Client(t)
	cfg.Client = client
	cfg.Now = now
	if !testing.Verbose() {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &service{h: agenticpm.NewHandler(cfg), client: client, table: cfg.Table}
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

// future is a day a year ahead. DynamoDB Local deletes expired items like
// DynamoDB does, by the real clock; tests that need expired items still
// stored run the service's clock ahead of it, so items it considers
// expired are not expired for the server yet.
func future() time.Time {
	return time.Now().UTC().AddDate(1, 0, 0).Truncate(24 * time.Hour)
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
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

func (s *service) do(t testing.TB, method, path, body string, header ...string) response {
	t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req.WithContext(context.Background()))
	return response{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

// must does a request that has to answer want and decodes the body into v.
func (s *service) must(t testing.TB, want int, method, path, body string, v any) response {
	t.Helper()
	r := s.do(t, method, path, body)
	if r.status != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, r.status, want, r.body)
	}
	if v != nil {
		r.json(t, v)
	}
	return r
}

// wantError checks an error response: status, code, and (when given) the
// field named in the body and a message fragment.
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
	if e.RequestID == "" {
		t.Errorf("no request_id: %s", r.body)
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

// items returns every item of the table, read consistently.
func (s *service) items(t testing.TB) []map[string]types.AttributeValue {
	t.Helper()
	var all []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for {
		out, err := s.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(s.table),
			ConsistentRead: aws.Bool(true), ExclusiveStartKey: start})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, out.Items...)
		if start = out.LastEvaluatedKey; len(start) == 0 {
			return all
		}
	}
}

func (s *service) count(t testing.TB) int { return len(s.items(t)) }

// raw reads one item as a generic map (nil when missing).
func (s *service) raw(t testing.TB, pk, sk string) map[string]any {
	t.Helper()
	out, err := s.client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Item) == 0 {
		return nil
	}
	var m map[string]any
	if err := attributevalue.UnmarshalMap(out.Item, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (s *service) putRaw(t testing.TB, item map[string]any) {
	t.Helper()
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: av}); err != nil {
		t.Fatal(err)
	}
}

const projectBody = `{"name":"MCU rebuild","source":"jira","sourceProjectKey":"MCU","autonomyLevel":"monitoring"}`

func (s *service) project(t testing.TB, body string) agenticpm.Project {
	t.Helper()
	if body == "" {
		body = projectBody
	}
	var p agenticpm.Project
	s.must(t, http.StatusCreated, "POST", "/projects", body, &p)
	return p
}

type page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"nextCursor"`
}

// all pages through path (which has a '?') and returns every item and the
// page sizes.
func all[T any](t testing.TB, s *service, path string) ([]T, []int) {
	t.Helper()
	var items []T
	var sizes []int
	cur := ""
	for range 100 {
		p := path
		if cur != "" {
			p += "&cursor=" + cur
		}
		var pg page[T]
		s.must(t, 200, "GET", p, "", &pg)
		items = append(items, pg.Items...)
		sizes = append(sizes, len(pg.Items))
		if pg.NextCursor == "" {
			return items, sizes
		}
		cur = pg.NextCursor
	}
	t.Fatalf("%s: more than 100 pages", path)
	return nil, nil
}

const missingID = "3f1d7e3a-0000-4000-8000-000000000000"
