package agenticpm_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/kmslocal"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/agenticpmapi"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/credentialsapi"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// service is the API on a fresh table created from the deployed template.
// The template has no function yet, so the environment is built here the
// way Table.Environment sets it.
type service struct {
	servicetest.Service
	cfg agenticpm.Config
}

func newService(t testing.TB, now func() time.Time) *service {
	t.Helper()
	return newServiceWith(t, now, nil)
}

// newServiceWith is newService with a last say on the configuration.
func newServiceWith(t testing.TB, now func() time.Time, configure func(*agenticpm.Config)) *service {
	t.Helper()
	s := servicetest.Start(t, "agenticpm", nil)
	cfg := servicetest.Config(t, agenticpm.ConfigFromEnv, map[string]string{contract.EnvTable: s.Tables["TableCD117FA1"]})
	cfg.Client, cfg.Logger = servicetest.FunctionClient(t, contract.API.Name), servicetest.Logger()
	cfg.Now = now
	withCredentialsKey(t, &cfg)
	if configure != nil {
		configure(&cfg)
	}
	// Each function's requests are recorded as its own (test/iamcalls).
	s.H = newAPIWith(cfg, func(f string) ddb.API { return servicetest.FunctionClient(t, f) })
	return &service{Service: s, cfg: cfg}
}

// newAPI is the service's API as API Gateway serves it, each route by its
// function's handler (services.Gateway), every function on cfg.
func newAPI(cfg agenticpm.Config) http.Handler { return newAPIWith(cfg, nil) }

// newAPIWith is newAPI with each function's DynamoDB client from clientOf
// (by its name) when clientOf is not nil.
func newAPIWith(cfg agenticpm.Config, clientOf func(function string) ddb.API) http.Handler {
	build := map[string]func(agenticpm.Config) http.Handler{
		contract.API.Name:         agenticpmapi.NewHandler,
		contract.Actions.Name:     agenticpm.NewActionsHandler,
		contract.Credentials.Name: agenticpm.NewCredentialsHandler,
	}
	fns := contract.Service.HTTPFunctions()
	handlers := make([]http.Handler, len(fns))
	for i, f := range fns {
		c := cfg
		if clientOf != nil {
			c.Client = clientOf(f.Name)
		}
		handlers[i] = build[f.Name](c)
	}
	return services.Gateway(fns, handlers)
}

// credentialsAlias is the dev stage's key, as the stack names it.
var credentialsAlias = contract.CredentialsKeyAlias("dev")

// withCredentialsKey gives cfg the dev stage's credentials key on the
// test binary's Local KMS, as the API's environment does in make dev.
func withCredentialsKey(t testing.TB, cfg *agenticpm.Config) {
	t.Helper()
	endpoint, _ := testenv.KMSKey(t, credentialsAlias)
	c, err := kmslocal.Config(context.Background(), endpoint)
	require.NoError(t, err, "Local KMS client")
	cfg.KMS, cfg.CredentialsKey, cfg.Stage = credentialsapi.KMS(c), credentialsAlias, "dev"
}

// future is a day a year ahead. DynamoDB Local deletes expired items like
// DynamoDB does, by the real clock; tests that need expired items still
// stored run the service's clock ahead of it, so items it considers
// expired are not expired for the server yet.
func future() time.Time {
	return time.Now().UTC().AddDate(1, 0, 0).Truncate(24 * time.Hour)
}

// raw reads one item as a generic map (nil when missing).
func (s *service) raw(t testing.TB, pk, sk string) map[string]any {
	t.Helper()
	out, err := s.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(s.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}})
	require.NoError(t, err, "GetItem %s %s", pk, sk)
	if len(out.Item) == 0 {
		return nil
	}
	var m map[string]any
	require.NoError(t, attributevalue.UnmarshalMap(out.Item, &m), "item %s %s", pk, sk)
	return m
}

func (s *service) putRaw(t testing.TB, item map[string]any) {
	t.Helper()
	av, err := attributevalue.MarshalMap(item)
	require.NoError(t, err, "marshal item")
	_, err = s.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: av})
	require.NoError(t, err, "PutItem")
}

const projectBody = `{"name":"MCU rebuild","source":"jira","sourceProjectKey":"MCU","autonomyLevel":"monitoring"}`

func (s *service) project(t testing.TB, body string) agenticpm.Project {
	t.Helper()
	if body == "" {
		body = projectBody
	}
	var p agenticpm.Project
	s.Must(t, http.StatusCreated, contract.CreateProject.Method, contract.CreateProject.URL(), body, &p)
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
		s.Must(t, 200, "GET", p, "", &pg)
		items = append(items, pg.Items...)
		sizes = append(sizes, len(pg.Items))
		if pg.NextCursor == "" {
			return items, sizes
		}
		cur = pg.NextCursor
	}
	require.FailNowf(t, "too many pages", "%s: more than 100 pages", path)
	return nil, nil
}

const missingID = "3f1d7e3a-0000-4000-8000-000000000000"
