package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The URLs of the ready line answer: GET / lists the services with their
// routes, GET /<service>/ one service's routes (its router's patterns under
// the runner's prefix).
func TestIndexPages(t *testing.T) {
	t.Parallel()
	dir := filepath.Dir(testenv.Template(t, "dev", "itsm"))
	r := start(t, dir)
	type service struct {
		Name   string   `json:"name"`
		URL    string   `json:"url"`
		Routes []string `json:"routes"`
	}
	var index struct {
		Services []service `json:"services"`
	}
	getJSON(t, r.base+"/", &index)
	var names []string
	for _, s := range index.Services {
		names = append(names, s.Name)
		assert.Equal(t, r.base+"/"+s.Name+"/", s.URL, "index entry %s: URL", s.Name)
		assert.NotEmpty(t, s.Routes, "index entry %s: routes", s.Name)
		assert.Contains(t, r.ready, s.Name+"="+s.URL, "ready line does not name %s", s.URL)
		var one service
		getJSON(t, s.URL, &one)
		assert.Equal(t, s.Name, one.Name, "GET %s: name against its index entry", s.URL)
		assert.Equal(t, s.Routes, one.Routes, "GET %s: routes against its index entry", s.URL)
	}
	assert.Equal(t, servedServices(t, dir), strings.Join(names, ","), "services the index lists")
	var itsm service
	getJSON(t, r.base+"/itsm/", &itsm)
	for _, route := range []string{"POST /itsm/tickets", "GET /itsm/tickets/{id}", "PATCH /itsm/tickets/{id}"} {
		assert.Contains(t, itsm.Routes, route, "itsm routes")
	}
	call(t, "GET", r.base+"/itsm/nothing", "", 404, nil)

	// Each service's OpenAPI document, with the runner's prefix as server.
	var doc struct {
		OpenAPI string                     `json:"openapi"`
		Servers []struct{ URL string }     `json:"servers"`
		Paths   map[string]json.RawMessage `json:"paths"`
	}
	getJSON(t, r.base+"/_local/openapi/itsm.json", &doc)
	assert.Equal(t, "3.1.0", doc.OpenAPI, "itsm document: OpenAPI version")
	assert.Contains(t, doc.Paths, itsmcontract.GetTicket.Path, "itsm document: paths")
	if assert.Len(t, doc.Servers, 1, "itsm document: servers") {
		assert.Equal(t, "/itsm", doc.Servers[0].URL, "itsm document: the runner's prefix")
	}
	call(t, "GET", r.base+"/_local/openapi/nothing.json", "", 404, nil)

	// CORS as API Gateway answers it, from the template: Stak's dev API
	// allows a localhost front end, before the token check; ITSM's none.
	preflight := func(url, origin string) *http.Response {
		req, err := http.NewRequest(http.MethodOptions, url, nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "GET")
		req.Header.Set("Access-Control-Request-Headers", "authorization")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	stats := r.base + "/stak/tenants/acme/inboxes/news/users/u1/stats"
	resp := preflight(stats, "http://localhost:3000")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode, "stak: preflight of a localhost origin")
	assert.Equal(t, "http://localhost:3000", resp.Header.Get("Access-Control-Allow-Origin"), "stak: allowed origin")
	assert.Contains(t, resp.Header.Get("Access-Control-Allow-Headers"), "authorization", "stak: the token's header")
	resp = preflight(stats, "https://elsewhere.example")
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "stak: another origin gets no CORS headers")
	resp = preflight(r.base+"/itsm/tickets", "http://localhost:3000")
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "itsm: no browser origin")
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: status; body %s", url, b)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"), "GET %s: Content-Type; body %s", url, b)
	require.NoError(t, json.Unmarshal(b, out), "GET %s: %s", url, b)
}
