package api_test

import (
	"net/http/httptest"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/stretchr/testify/assert"
)

const paramCaller service.QueryParam = "caller"

// A handler reads its query by the contract's parameters.
func TestQueryValues(t *testing.T) {
	for _, tt := range []struct {
		query          string
		caller, cursor string
		hasCaller      bool
	}{
		{"", "", "", false},
		{"caller=u1", "u1", "", true},
		{"caller=", "", "", true},
		{"caller=a+b&cursor=c%2Fd", "a b", "c/d", true},
		{"cursor=x", "", "x", false},
	} {
		t.Run(tt.query, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/tickets?"+tt.query, nil)
			q := api.QueryOf(r)
			assert.Equal(t, tt.caller, q.Get(paramCaller), "Get(caller)")
			assert.Equal(t, tt.hasCaller, q.Has(paramCaller), "Has(caller)")
			assert.Equal(t, tt.cursor, q.Cursor(), "Cursor()")
			assert.Equal(t, tt.caller, api.Query(r, paramCaller), "Query(r, caller)")
		})
	}
}

func TestPathValue(t *testing.T) {
	r := httptest.NewRequest("GET", "/tickets/t-1", nil)
	r.SetPathValue("id", "t-1")
	assert.Equal(t, "t-1", api.PathValue(r, service.PathParam("id")), "PathValue(id)")
	assert.Empty(t, api.PathValue(r, service.PathParam("other")), "PathValue(other)")
}

func TestLocation(t *testing.T) {
	for _, tt := range []struct {
		route  service.Route
		values []string
		want   string
	}{
		{service.Route{Method: "GET", Path: "/tickets/{id}"}, []string{"t-1"}, "tickets/t-1"},
		{service.Route{Method: "GET", Path: "/projects/{id}/escalations/{eid}"}, []string{"p", "e 1"}, "projects/p/escalations/e%201"},
	} {
		assert.Equal(t, tt.want, api.Location(tt.route, tt.values...), "Location(%s, %q)", tt.route.Key(), tt.values)
	}
}
