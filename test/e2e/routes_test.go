// Package e2e checks the deployed contract between infrastructure and code:
// the routes API Gateway forwards, the environment the function receives and
// the tables it finds are all read from the golden templates, then served by
// the real handler against DynamoDB Local.
package e2e

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services"
	"github.com/dynastack/dynastack/lambdas/services/stak"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// route is a deployed route: its key, authorization and the name of the
// function its integration invokes.
type route struct{ method, path, auth, function string }

// anyID is the value every path parameter gets: a UUID, which every key
// and id check of the services accepts.
const anyID = "00000000-0000-4000-8000-000000000000"

// target is route's URL with anyID for each path parameter, built as
// every client builds it (service.Route.URL). The sweeps of this package
// (every deployed route served, every Idempotent route honouring its key,
// every route under a throttle) send each route the same raw request, a
// body of {} whatever its schema, which no generated client would send:
// they stay raw HTTP on purpose, their paths from the contract; the typed
// clients' own tests are in typed_client_test.go.
func target(route service.Route) string {
	values := make([]string, len(route.Params()))
	for i := range values {
		values[i] = anyID
	}
	return route.URL(values...)
}

// contractRoute is the contract's route that r, a deployed route, is, in
// the contract of the function r invokes: a route the template sends to
// another function than the contract's would be a 404 in AWS.
func contractRoute(t *testing.T, r route) (service.Route, bool) {
	t.Helper()
	fn, _ := catalog.Function(r.function)
	i := slices.IndexFunc(fn.Routes, func(c service.Route) bool { return c.Key() == r.method+" "+r.path })
	if !assert.GreaterOrEqual(t, i, 0, "%s %s is deployed to %s, whose contract has no such route", r.method, r.path, r.function) {
		return service.Route{}, false
	}
	return fn.Routes[i], true
}

// apiRoutes returns the routes of the template's HTTP API, each with the
// name of the function it invokes.
func apiRoutes(t *testing.T, path string) []route {
	t.Helper()
	tmpl, err := cfntables.Load(path)
	require.NoError(t, err)
	fns, err := tmpl.Functions()
	require.NoError(t, err)
	names := map[string]string{} // logical id → function name
	for _, f := range fns {
		names[f.LogicalID] = f.Service()
	}
	routes, err := tmpl.Routes()
	require.NoError(t, err)
	out := make([]route, len(routes))
	for i, r := range routes {
		method, p, _ := strings.Cut(r.Key, " ")
		out[i] = route{method, p, r.Auth, names[r.Function]}
	}
	return out
}

// checkAuthorization: every route is IAM-authorized but the end-user
// routes of Stak, which take a JWT, and those are exactly the routes whose
// handler binds the path to the token's claims (stak.UserRoutes).
func checkAuthorization(t *testing.T, service string, routes []route) {
	t.Helper()
	for _, r := range routes {
		want := "AWS_IAM"
		if service == "stak" && slices.Contains(stak.UserRoutes, r.method+" "+r.path) {
			want = "JWT"
		}
		assert.Equal(t, want, r.auth, "route %s %s: authorization", r.method, r.path)
	}
}

// checkSameRoutes: a route the handler serves but API Gateway does not
// forward is unreachable in AWS (and works locally, where nothing filters).
func checkSameRoutes(t *testing.T, h http.Handler, deployed []route) {
	t.Helper()
	routed, ok := h.(api.Routed)
	require.True(t, ok, "handler does not list its routes (build it with api.NewRouter and api.Instrument)")
	want := map[string]bool{}
	for _, r := range deployed {
		want[r.method+" "+r.path] = true
	}
	got := map[string]bool{}
	for _, p := range routed.Patterns() {
		// Go's greedy wildcard {name...} is API Gateway's {name+}.
		got[greedy.ReplaceAllString(p, "{$1+}")] = true
	}
	for p := range got {
		assert.True(t, want[p], "%s is served but not deployed: declare it in the service's contract (constructs/<service>/contract)", p)
	}
	for p := range want {
		assert.True(t, got[p], "%s is deployed but the handler registers no such pattern", p)
	}
}

var greedy = regexp.MustCompile(`\{([A-Za-z0-9_]+)\.\.\.\}`)

// TestEveryDeployedRouteIsServed: a route the gateway forwards but the code
// does not serve (or serves under another method) would be a 404/405 in
// production. Every service with an API is covered, in every stage.
func TestEveryDeployedRouteIsServed(t *testing.T) {
	for _, stage := range []string{"dev", "stage", "prod"} {
		for _, name := range services.Names() {
			t.Run(stage+"/"+name, func(t *testing.T) {
				path := testenv.Template(t, stage, name)
				tmpl, tables := testenv.Tables(t, path)
				routes := apiRoutes(t, path)
				require.NotEmpty(t, routes, "%s has a function but no API routes", path)
				// Each function serves exactly the routes the template
				// sends it.
				byFunction := map[string][]route{}
				for _, r := range routes {
					byFunction[r.function] = append(byFunction[r.function], r)
				}
				handlers := map[string]http.Handler{}
				for function, rs := range byFunction {
					build, ok := services.Lookup(function)
					require.True(t, ok, "%s: routes go to %q, which is no HTTP function of the registry", path, function)
					getenv := testenv.Getenv(t, testenv.ServiceEnv(t, tmpl, tables, function))
					h, err := build(t.Context(), getenv, ddbrecord.ClientOptions(getenv)...)
					require.NoError(t, err)
					checkSameRoutes(t, h, rs)
					handlers[function] = h
				}
				checkAuthorization(t, name, routes)
				for _, r := range routes {
					c, ok := contractRoute(t, r)
					if !ok {
						continue
					}
					req := httptest.NewRequest(r.method, target(c), bytes.NewReader([]byte(`{}`)))
					rec := httptest.NewRecorder()
					handlers[r.function].ServeHTTP(rec, req)
					body := rec.Body.String()
					assert.NotEqual(t, http.StatusMethodNotAllowed, rec.Code, "%s %s is deployed but not served: %s", r.method, r.path, body)
					assert.NotContains(t, body, "no route for", "%s %s is deployed but not served", r.method, r.path)
					assert.Less(t, rec.Code, 500, "%s %s: %s", r.method, r.path, body)
				}
			})
		}
	}
}
