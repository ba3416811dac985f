// Package servicetest is the harness the integration tests of every
// service share: the service's tables created from its golden template,
// its configuration read from the function's environment as in AWS, a
// handler whose DynamoDB client is recorded as the function's
// (testenv.Main) beside a client of the tests' own for fixtures and
// assertions, and the requests and table reads every service's tests make.
// A service's main_test.go keeps only what is its own: its options and
// how they land in its Config.
//
// A test calls its service's routes by the contract, never by a path it
// writes: s.MustRoute(t, 200, contract.ListMessages, body, &out, uid) sends
// the route's method at its path with the values filled in, and a request
// with a query or headers spells the route out, s.Do(t,
// contract.ListTickets.Method, contract.ListTickets.URLQuery(…), body, …).
package servicetest

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/openapi"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
)

// Main is the TestMain of a service package: one DynamoDB Local for the
// binary, and the call log test/iamcalls reads.
//
// After a full run (no -run, -skip or -short), it also fails a package
// that emitted none of a metric its service's contract declares
// (service.Function.Metrics; the platform's own metrics aside):
// platform/metrics keeps what the process emitted, so every declared
// metric is proven emitted by some test of its service.
func Main(m *testing.M) {
	code := testenv.Main(m)
	if code == 0 {
		if err := checkEmitted(); err != nil {
			fmt.Fprintln(os.Stderr, "servicetest:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkEmitted holds the registry of platform/metrics to the contract of
// the service whose package runs (the working directory's name).
func checkEmitted() error {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return nil
		}
	}
	if testing.Short() {
		return nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	emitted := map[string]bool{}
	for _, e := range metrics.Emitted() {
		emitted[e.Metric] = true
	}
	var missing []string
	for _, c := range catalog.Services() {
		if c.Name != filepath.Base(wd) {
			continue
		}
		for _, f := range c.Functions {
			for _, m := range f.Metrics {
				if !emitted[m.Name] {
					missing = append(missing, f.Name+" "+m.Name)
				}
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no test emitted these metrics of the contract (write one that drives the code path and reads the EMF line): %s", strings.Join(missing, ", "))
	}
	return nil
}

// Service is a service under test. It is a value: a test that copies it
// and swaps the handler (a cost test's recorded client) leaves the
// original alone.
type Service struct {
	// H is the API as the tests call it.
	H http.Handler
	// Client is the tests' own, not recorded as any function's.
	Client *dynamodb.Client
	// Table is the table, when the template has exactly one.
	Table string
	// Tables maps each table's logical id to its created name.
	Tables   map[string]string
	Template *cfntables.Template
	// Headers (name, value pairs) go with every request of Do and Must.
	Headers []string
	// API checks every request Do, Must and Hostile send, and its answer,
	// against the service's OpenAPI document
	// (docs/api/<stack>.openapi.json): a request the document refuses
	// must be refused, and an answer must be one the document declares.
	API *openapi.Checker
}

// Start creates, under names unique to the test, the tables of tmpl, or
// of the dev golden template of stack when tmpl is nil.
func Start(t testing.TB, stack string, tmpl *cfntables.Template) Service {
	t.Helper()
	if tmpl == nil {
		var err error
		tmpl, err = cfntables.Load(testenv.Template(t, "dev", stack))
		require.NoError(t, err, "the dev template of %s", stack)
	}
	s := Service{Client: testenv.Client(t), Tables: testenv.CreateTables(t, tmpl), Template: tmpl, API: Checker(t, stack)}
	if len(s.Tables) == 1 {
		for _, name := range s.Tables {
			s.Table = name
		}
	}
	return s
}

// Checker is the checker of the OpenAPI document of the service named
// name, as committed.
func Checker(t testing.TB, name string) *openapi.Checker {
	t.Helper()
	c, ok := contractOf(name)
	require.True(t, ok, "no contract named %s", name)
	root, err := repo.Root("")
	require.NoError(t, err, "the repository root")
	doc, err := openapi.Load(filepath.Join(root, openapi.File(name)))
	require.NoError(t, err, "the OpenAPI document of %s (go run ./lambdas/devtools/cmd/openapi writes it)", name)
	return openapi.NewChecker(doc, c)
}

func contractOf(name string) (service.Contract, bool) {
	for _, c := range catalog.Services() {
		if c.Name == name {
			return c, true
		}
	}
	return service.Contract{}, false
}

// Checked is s.H with every exchange checked against the document (s.API):
// a mismatch fails t.
func (s Service) Checked(t testing.TB) http.Handler {
	if s.API == nil {
		return s.H
	}
	return s.API.Handler(s.H, func(err error) {
		t.Helper()
		t.Errorf("OpenAPI: %v", err)
	})
}

// Env is the environment the template gives the function whose
// DYNASTACK_SERVICE is function, table references resolved.
func (s Service) Env(t testing.TB, function string) map[string]string {
	t.Helper()
	return testenv.ServiceEnv(t, s.Template, s.Tables, function)
}

// Config reads a service's configuration from env with its fromEnv
// (ConfigFromEnv), failing the test on an error.
func Config[C any](t testing.TB, fromEnv func(func(string) string) (C, error), env map[string]string) C {
	t.Helper()
	c, err := fromEnv(func(k string) string { return env[k] })
	require.NoError(t, err, "the configuration from the environment")
	return c
}

// FunctionClient is the client the function whose DYNASTACK_SERVICE is
// function makes: its requests are recorded as that function's.
func FunctionClient(t testing.TB, function string) *dynamodb.Client {
	t.Helper()
	return testenv.ServiceClient(t, function)
}

// Logger is the logger for a service's Config: quiet unless -v, and then
// nil, the service's default.
func Logger() *slog.Logger {
	if testing.Verbose() {
		return nil
	}
	return slog.New(slog.DiscardHandler)
}

// Do sends a request with s.Headers and headers (name, value pairs).
func (s Service) Do(t testing.TB, method, path, body string, headers ...string) apitest.Response {
	t.Helper()
	return apitest.Do(t, s.Checked(t), method, path, body, append(slices.Clip(s.Headers), headers...)...)
}

// Must sends a request that has to answer status and decodes the body
// into v unless v is nil.
func (s Service) Must(t testing.TB, status int, method, path, body string, v any) apitest.Response {
	t.Helper()
	r := s.Do(t, method, path, body)
	require.Equal(t, status, r.Status, "%s %s: status (body %s)", method, path, r.Body)
	if v != nil {
		r.JSON(t, v)
	}
	return r
}

// MustRoute is Must of a route of the contract: route's method at
// route.URL(values...), the path parameters in the order of the route's
// path (Route.Params). It is how a service's test calls its own routes, so
// that no path is written twice (lambdas/services/names_test.go,
// TestRoutePathsComeFromTheContract); a request with a query, with headers
// or one whose status is read rather than required spells the route out:
// s.Do(t, contract.ListTickets.Method,
// contract.ListTickets.URLQuery(service.Values{…}, …), body, headers…).
func (s Service) MustRoute(t testing.TB, status int, route service.Route, body string, v any, values ...string) apitest.Response {
	t.Helper()
	return s.Must(t, status, route.Method, route.URL(values...), body, v)
}

// Items returns every item of table, read consistently.
func (s Service) Items(t testing.TB, table string) []map[string]types.AttributeValue {
	t.Helper()
	var all []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(s.Client, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		require.NoError(t, err, "scan of %s", table)
		all = append(all, out.Items...)
	}
	return all
}

// Count is the number of items in s.Table.
func (s Service) Count(t testing.TB) int {
	t.Helper()
	return len(s.Items(t, s.Table))
}

// Digest is every item of every table, for "nothing changed" checks.
func (s Service) Digest(t testing.TB) string {
	t.Helper()
	return testenv.Digest(t, s.Client, slices.Sorted(maps.Values(s.Tables))...)
}

// Hostile sends every hostile input of apitest.Hostile to every route
// that routes (the service's own handler, as it registers them) serves,
// through s.H, and checks each is a 4xx that changes no table. writes are
// the service's valid writes that the inputs are made from.
func (s Service) Hostile(t *testing.T, routes http.Handler, writes ...apitest.Write) {
	t.Helper()
	r, ok := routes.(api.Routed)
	require.True(t, ok, "%T lists its routes (api.Routed): build it with api.Instrument over an api router", routes)
	apitest.Hostile(t, s.Checked(t), r.Patterns(), s.Digest, writes...)
}

// FaultyClient is FunctionClient through a ddbfault proxy in front of the
// test DynamoDB: the proxy injects DynamoDB's own faults where the test
// says (Set, Next), and the function's requests are still recorded as its
// ("" for a client of no function, whose requests nobody's policy needs).
func FaultyClient(t testing.TB, function string) (*dynamodb.Client, *ddbfault.Proxy) {
	t.Helper()
	p, err := ddbfault.Start(testenv.Endpoint(t))
	require.NoError(t, err, "the fault proxy")
	t.Cleanup(p.Close)
	getenv := ddblocal.WithEndpoint(p.URL, func(k string) string {
		return map[string]string{service.EnvFunction: function}[k]
	})
	c, err := ddb.NewClient(context.Background(), getenv, ddbrecord.ClientOptions(getenv)...)
	require.NoError(t, err, "the client through the fault proxy")
	return c, p
}
