package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// TestRouterMatchesOnce: a request the mux routes reaches its handler
// with its path values and the pattern; one it redirects (an uncleaned
// path) gets the mux's redirect as the mux writes it, body included; one
// it cannot route gets the JSON 404 or 405.
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
		{"GET", "/things//7", http.StatusTemporaryRedirect, "<a href=\"/things/7\">Temporary Redirect</a>.\n\n", "/things/7"},
		{"GET", "/nothing", 404, "", ""},
		{"POST", "/things/7", 405, "", ""},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, nil))
		if w.Code != tt.status {
			t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, w.Code, w.Body, tt.status)
			continue
		}
		if tt.body != "" && w.Body.String() != tt.body {
			t.Errorf("%s %s: body %q, want %q", tt.method, tt.path, w.Body, tt.body)
		}
		if tt.header != "" && w.Header().Get("Location") != tt.header {
			t.Errorf("%s %s: Location %q, want %q", tt.method, tt.path, w.Header().Get("Location"), tt.header)
		}
		if tt.status >= 400 && w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: Content-Type %q, want the JSON error", tt.method, tt.path, w.Header().Get("Content-Type"))
		}
	}
}
