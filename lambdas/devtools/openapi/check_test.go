package openapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/openapi"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

type thing struct {
	ID    string   `json:"id"`
	Count int      `json:"count"`
	Tags  []string `json:"tags"`
	Note  string   `json:"note,omitempty"`
}

type thingRequest struct {
	Name string `json:"name"`
}

var (
	getThing    = service.Route{Operation: "getThing", Method: "GET", Path: "/things/{id}"}
	createThing = service.Route{Operation: "createThing", Method: "POST", Path: "/things", Idempotent: true, Query: []service.QueryParam{service.Limit, service.Cursor}}
	things      = service.Contract{Name: "things", APIVersion: "1.0.0",
		Functions: []service.Function{{Name: "things", Kind: service.HTTP, Routes: []service.Route{getThing, createThing}}}}
	operations = []api.Operation{
		{Route: getThing, Answers: []api.Answer{{Status: http.StatusOK, Body: thing{}}}},
		{Route: createThing, Body: thingRequest{}, Query: api.PageParams(10, 10),
			Answers: []api.Answer{{Status: http.StatusCreated, Body: thing{}, Location: true}}},
	}
)

// checker is the Checker of a small API's document, built and validated
// as the services' are.
func checker(t *testing.T) *openapi.Checker {
	doc, err := openapi.Document(things, operations)
	require.NoError(t, err, "the document")
	b, err := openapi.Marshal(doc)
	require.NoError(t, err, "marshal")
	doc, err = openapi.Parse(b)
	require.NoError(t, err, "a valid document")
	return openapi.NewChecker(doc, things)
}

// serve checks one exchange of h through the checker and returns what it
// found.
func serve(t *testing.T, h http.HandlerFunc, method, path, body string, headers ...string) []error {
	var errs []error
	apitest.Do(t, checker(t).Handler(h, func(err error) { errs = append(errs, err) }), method, path, body, headers...)
	return errs
}

func TestCheckerPassesWhatTheDocumentSays(t *testing.T) {
	ok := func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, thing{ID: "a", Count: 1})
	}
	assert.Empty(t, serve(t, ok, "GET", getThing.URL("a"), ""), "a declared answer; a nil slice is null")
	notFound := func(w http.ResponseWriter, r *http.Request) { api.WriteError(w, r, api.NotFound("no")) }
	assert.Empty(t, serve(t, notFound, "GET", getThing.URL("a"), ""), "the error shape")
	refused := func(w http.ResponseWriter, r *http.Request) { api.WriteError(w, r, api.BadRequest("no")) }
	assert.Empty(t, serve(t, refused, "POST", createThing.URL(), `{"name":"a","extra":1}`), "a refused request the document refuses")
}

func TestCheckerFailsAWrongAnswer(t *testing.T) {
	tests := []struct {
		name    string
		h       http.HandlerFunc
		method  string
		path    string
		body    string
		headers []string
	}{
		{"a field of the wrong type", func(w http.ResponseWriter, r *http.Request) {
			api.WriteJSON(w, http.StatusOK, map[string]any{"id": "a", "count": "one", "tags": nil})
		}, "GET", getThing.URL("a"), "", nil},
		{"a required field missing", func(w http.ResponseWriter, r *http.Request) {
			api.WriteJSON(w, http.StatusOK, map[string]any{"id": "a", "tags": nil})
		}, "GET", getThing.URL("a"), "", nil},
		{"an undeclared success status", func(w http.ResponseWriter, r *http.Request) {
			api.WriteJSON(w, http.StatusAccepted, thing{ID: "a"})
		}, "GET", getThing.URL("a"), "", nil},
		{"an error not in the error shape", func(w http.ResponseWriter, r *http.Request) {
			api.WriteJSON(w, http.StatusNotFound, map[string]string{"message": "no"})
		}, "GET", getThing.URL("a"), "", nil},
		{"a request the document refuses, accepted", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/things/a")
			api.WriteJSON(w, http.StatusCreated, thing{ID: "a"})
		}, "POST", createThing.URL(), `{"name":5}`, nil},
		{"a page size above the bound, accepted", func(w http.ResponseWriter, r *http.Request) {
			api.WriteJSON(w, http.StatusCreated, thing{ID: "a"})
		}, "POST", createThing.URLQuery(service.Values{service.Limit: "11"}), `{"name":"a"}`, nil},
		{"a replay header on a route that is not idempotent", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Idempotent-Replayed", "true")
			api.WriteJSON(w, http.StatusOK, thing{ID: "a"})
		}, "GET", getThing.URL("a"), "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NotEmpty(t, serve(t, tt.h, tt.method, tt.path, tt.body, tt.headers...), "the checker finds it")
		})
	}
}
