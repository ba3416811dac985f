package agenticpm_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
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
	cfg    agenticpm.Config
}

func newService(t testing.TB, now func() time.Time) *service {
	t.Helper()
	return newServiceWith(t, now, nil)
}

// newServiceWith is newService with a last say on the configuration.
func newServiceWith(t testing.TB, now func() time.Time, configure func(*agenticpm.Config)) *service {
	t.Helper()
	_, names := testenv.Tables(t, testenv.Template(t, "dev", "agenticpm"))
	env := map[string]string{agenticpm.EnvTable: names["TableCD117FA1"]}
	cfg, err := agenticpm.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	// The handler's client is recorded as the function's (testenv.Main);
	// fixtures and assertions use their own.
	client := testenv.Client(t)
	cfg.Client = testenv.ServiceClient(t, "agenticpm")
	cfg.Now = now
	if !testing.Verbose() {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if configure != nil {
		configure(&cfg)
	}
	return &service{h: agenticpm.NewHandler(cfg), client: client, table: cfg.Table, cfg: cfg}
}

// future is a day a year ahead. DynamoDB Local deletes expired items like
// DynamoDB does, by the real clock; tests that need expired items still
// stored run the service's clock ahead of it, so items it considers
// expired are not expired for the server yet.
func future() time.Time {
	return time.Now().UTC().AddDate(1, 0, 0).Truncate(24 * time.Hour)
}

func (s *service) do(t testing.TB, method, path, body string, header ...string) apitest.Response {
	t.Helper()
	return apitest.Do(t, s.h, method, path, body, header...)
}

// must does a request that has to answer want and decodes the body into v.
func (s *service) must(t testing.TB, want int, method, path, body string, v any) apitest.Response {
	t.Helper()
	r := s.do(t, method, path, body)
	if r.Status != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	if v != nil {
		r.JSON(t, v)
	}
	return r
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
