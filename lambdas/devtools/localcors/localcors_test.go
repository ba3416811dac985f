package localcors_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/localcors"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
)

// devStak is the CORS of Stak's API in the dev golden template: what API
// Gateway is configured with.
func devStak(t *testing.T) *cfntables.CORS {
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", "stak"))
	require.NoError(t, err, "the dev stak template")
	c, err := tmpl.CORS()
	require.NoError(t, err, "its CORS")
	require.NotNil(t, c, "dev's stak API has a CORS configuration (infra/config)")
	return c
}

func serve(h http.Handler, method, origin string, headers ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, stakcontract.Stats.URL("t", "i", "u"), nil)
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestPreflightAndActualRequests(t *testing.T) {
	c := devStak(t)
	var reached int
	h := localcors.Handler(c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		w.WriteHeader(http.StatusOK)
	}))
	allowed := c.AllowOrigins[0]

	pre := serve(h, http.MethodOptions, allowed, "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization")
	assert.Equal(t, http.StatusNoContent, pre.Code, "preflight of an allowed origin")
	assert.Equal(t, allowed, pre.Header().Get("Access-Control-Allow-Origin"), "preflight: allowed origin")
	assert.Contains(t, pre.Header().Get("Access-Control-Allow-Methods"), "GET", "preflight: methods")
	assert.Contains(t, pre.Header().Get("Access-Control-Allow-Headers"), "authorization", "preflight: headers")
	assert.Zero(t, reached, "API Gateway answers a preflight itself")

	get := serve(h, http.MethodGet, allowed)
	assert.Equal(t, http.StatusOK, get.Code, "actual request of an allowed origin")
	assert.Equal(t, allowed, get.Header().Get("Access-Control-Allow-Origin"), "actual request: allowed origin")
	assert.Equal(t, 1, reached, "the actual request reaches the function")

	refused := "https://evil.example"
	pre = serve(h, http.MethodOptions, refused, "Access-Control-Request-Method", "GET")
	assert.Equal(t, http.StatusNoContent, pre.Code, "preflight of another origin")
	assert.Empty(t, pre.Header().Get("Access-Control-Allow-Origin"), "preflight of another origin: no CORS headers")
	assert.Empty(t, pre.Header().Get("Access-Control-Allow-Methods"), "preflight of another origin: no CORS headers")
	get = serve(h, http.MethodGet, refused)
	assert.Empty(t, get.Header().Get("Access-Control-Allow-Origin"), "actual request of another origin: no CORS headers")

	pre = serve(h, http.MethodOptions, allowed, "Access-Control-Request-Method", "DELETE")
	assert.Empty(t, pre.Header().Get("Access-Control-Allow-Origin"), "a method the configuration does not allow")
}

// TestNoCORSByDefault: the other services' dev APIs allow no origin.
func TestNoCORSByDefault(t *testing.T) {
	for _, name := range []string{"rezagent", "nucleus", "itsm", "agenticpm"} {
		tmpl, err := cfntables.Load(testenv.Template(t, "dev", name))
		require.NoError(t, err, "the dev %s template", name)
		c, err := tmpl.CORS()
		require.NoError(t, err, "%s: its CORS", name)
		assert.Nil(t, c, "%s: no browser origin", name)
		h := localcors.Handler(c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		assert.Empty(t, serve(h, http.MethodGet, "http://localhost:3000").Header().Get("Access-Control-Allow-Origin"), "%s: no CORS headers", name)
	}
}
