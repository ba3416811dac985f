package api_test

import (
	"net/http/httptest"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
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
			if got := q.Get(paramCaller); got != tt.caller {
				t.Errorf("Get(caller) = %q, want %q", got, tt.caller)
			}
			if got := q.Has(paramCaller); got != tt.hasCaller {
				t.Errorf("Has(caller) = %v, want %v", got, tt.hasCaller)
			}
			if got := q.Cursor(); got != tt.cursor {
				t.Errorf("Cursor() = %q, want %q", got, tt.cursor)
			}
			if got := api.Query(r, paramCaller); got != tt.caller {
				t.Errorf("Query(r, caller) = %q, want %q", got, tt.caller)
			}
		})
	}
}

func TestPathValue(t *testing.T) {
	r := httptest.NewRequest("GET", "/tickets/t-1", nil)
	r.SetPathValue("id", "t-1")
	if got := api.PathValue(r, service.PathParam("id")); got != "t-1" {
		t.Errorf("PathValue(id) = %q, want t-1", got)
	}
	if got := api.PathValue(r, service.PathParam("other")); got != "" {
		t.Errorf("PathValue(other) = %q, want empty", got)
	}
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
		if got := api.Location(tt.route, tt.values...); got != tt.want {
			t.Errorf("Location(%s, %q) = %q, want %q", tt.route.Key(), tt.values, got, tt.want)
		}
	}
}
