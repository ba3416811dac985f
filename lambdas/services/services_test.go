package services_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/services"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryContractFunctionIsBound: each function of every contract has
// exactly one binding, of its kind, and a main (cmd/<name>) that starts
// that binding; no binding or main is outside a contract.
func TestEveryContractFunctionIsBound(t *testing.T) {
	bound := map[string]int{}
	for _, b := range services.Functions() {
		bound[b.Function.Name]++
		if want, ok := catalog.Function(b.Function.Name); assert.True(t, ok, "binding %s is in no contract", b.Function.Name) {
			assert.Equal(t, want.Kind, b.Function.Kind, "binding %s: the kind its contract says", b.Function.Name)
		}
	}
	for _, f := range catalog.Functions() {
		assert.Equal(t, 1, bound[f.Name], "function %s: bindings", f.Name)
		main, err := os.ReadFile(filepath.Join("..", f.Package(), "main.go"))
		if !assert.NoError(t, err, "function %s", f.Name) {
			continue
		}
		assert.Contains(t, string(main), "fn.Main(", "%s/main.go does not start its binding with fn.Main", f.Package())
	}
	mains, _ := filepath.Glob("../cmd/*/main.go")
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		src, _ := os.ReadFile(m)
		if _, ok := catalog.Function(name); !ok {
			assert.NotContains(t, string(src), "fn.Main(", "cmd/%s starts a function that no contract declares", name)
		}
	}
}

func TestRegistry(t *testing.T) {
	assert.Equal(t, []string{"agenticpm", "itsm", "nucleus", "rezagent", "stak"}, services.Names(), "Names")
	_, ok := services.Lookup("stak-stream")
	assert.False(t, ok, "the stak stream consumer is registered as an HTTP service")
	_, ok = services.LookupConsumer("stak-stream")
	assert.True(t, ok, "the stak stream consumer is not registered")
	ctor, ok := services.Lookup("itsm")
	require.True(t, ok, "itsm not registered")
	// Configuration errors surface at construction and name the variable.
	_, err := ctor(context.Background(), func(string) string { return "" })
	assert.ErrorContains(t, err, "ITSM_TICKETS_TABLE", "constructor without env")
	h, err := ctor(context.Background(), func(k string) string {
		return map[string]string{"ITSM_TICKETS_TABLE": "t", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1"}[k]
	})
	assert.NoError(t, err, "constructor")
	assert.NotNil(t, h, "constructor")
}

func TestJobs(t *testing.T) {
	ctor, ok := services.LookupJob("nucleus-executor")
	require.True(t, ok, "nucleus-executor not registered")
	_, ok = services.LookupJob("nucleus")
	assert.False(t, ok, "the nucleus API is registered as a job")
	_, err := ctor(context.Background(), func(string) string { return "" })
	assert.ErrorContains(t, err, "NUCLEUS_APP_TABLE", "constructor without env")
	env := map[string]string{"NUCLEUS_APP_TABLE": "a", "NUCLEUS_AUDIT_TABLE": "b", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1",
		"AWS_ENDPOINT_URL_STS": "http://127.0.0.1:2", "NUCLEUS_EXECUTOR_LOOKBACK": "soon"}
	_, err = ctor(context.Background(), func(k string) string { return env[k] })
	assert.ErrorContains(t, err, "NUCLEUS_EXECUTOR_LOOKBACK", "bad look-back")
	env["NUCLEUS_EXECUTOR_LOOKBACK"] = "30m"
	job, err := ctor(context.Background(), func(k string) string { return env[k] })
	assert.NoError(t, err, "constructor")
	assert.NotNil(t, job, "constructor")
}

// Gateway sends each request where API Gateway's route integrations
// would: a route to the function that serves it, a known path with
// another method to that path's function (whose router answers 405), and
// anything else to the first function.
func TestGateway(t *testing.T) {
	list := service.Route{Operation: "listThings", Method: "GET", Path: "/things"}
	get := service.Route{Operation: "getThing", Method: "GET", Path: "/things/{id}"}
	put := service.Route{Operation: "putSecret", Method: "PUT", Path: "/secrets/{name}"}
	fns := []service.Function{
		{Name: "things", Kind: service.HTTP, Routes: []service.Route{list, get}},
		{Name: "things-secrets", Kind: service.HTTP, Routes: []service.Route{put}},
	}
	named := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("X-Function", name) })
	}
	g := services.Gateway(fns, []http.Handler{named("things"), named("things-secrets")})
	for _, tt := range []struct{ method, path, want string }{
		{"GET", "/things", "things"},
		{"GET", "/things/7", "things"},
		{"PUT", "/secrets/jira", "things-secrets"},
		{"GET", "/secrets/jira", "things-secrets"},
		{"DELETE", "/things/7", "things"},
		{"GET", "/nowhere", "things"},
	} {
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		assert.Equal(t, tt.want, rec.Header().Get("X-Function"), "%s %s", tt.method, tt.path)
	}
	one := named("things")
	assert.Equal(t, fmt.Sprint(one), fmt.Sprint(services.Gateway(fns[:1], []http.Handler{one})), "one function is its own handler")
}
