package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/stretchr/testify/assert"
)

// TestRouterMatchesOnce: a request the mux routes reaches its handler
// with its path values and the pattern; one it would redirect (a path
// with empty, "." or ".." segments) is a JSON 400 naming the route's
// form, never a 307 a client would follow with its method; one it cannot
// route gets the JSON 404 or 405.
func TestRouterMatchesOnce(t *testing.T) {
	things := service.Route{Method: "GET", Path: "/things/{id}"}
	rt := api.NewRouter(service.Function{Name: "things", Kind: service.HTTP, Routes: []service.Route{things}})
	rt.Handle(things, func(w http.ResponseWriter, r *http.Request) error {
		api.WriteJSON(w, http.StatusOK, map[string]string{"id": r.PathValue("id"), "pattern": r.Pattern})
		return nil
	})
	h := rt.Done()
	for _, tt := range []struct {
		method, path string
		status       int
		body, header string
	}{
		{"GET", "/things/7", 200, `{"id":"7","pattern":"GET /things/{id}"}` + "\n", ""},
		{"GET", "/things//7", 400, "", ""},
		{"DELETE", "/things/./7", 400, "", ""},
		{"GET", "/things/x/../7", 400, "", ""},
		{"GET", "/nothing", 404, "", ""},
		{"POST", "/things/7", 405, "", ""},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, nil))
		if !assert.Equal(t, tt.status, w.Code, "%s %s: status (body %s)", tt.method, tt.path, w.Body) {
			continue
		}
		if tt.body != "" {
			assert.Equal(t, tt.body, w.Body.String(), "%s %s: body", tt.method, tt.path)
		}
		if tt.header != "" {
			assert.Equal(t, tt.header, w.Header().Get("Location"), "%s %s: Location", tt.method, tt.path)
		}
		if tt.status >= 400 {
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"), "%s %s: Content-Type of the JSON error", tt.method, tt.path)
			assert.Empty(t, w.Header().Get("Location"), "%s %s: no redirect", tt.method, tt.path)
		}
		if tt.status == 400 {
			assert.Contains(t, w.Body.String(), `"code":"bad_request"`, "%s %s: body", tt.method, tt.path)
			assert.Contains(t, w.Body.String(), "has empty, '.' or '..' segments; send the path as the route writes it (/things/7)", "%s %s: says the fix", tt.method, tt.path)
		}
	}
}
