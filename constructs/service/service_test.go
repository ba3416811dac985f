package service_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	list    = service.Route{Method: "GET", Path: "/tickets", Query: []service.QueryParam{"caller", service.Cursor}}
	comment = service.Route{Method: "POST", Path: "/tickets/{id}/comments"}
	nested  = service.Route{Operation: "getEscalation", Method: "GET", Path: "/projects/{id}/escalations/{eid}"}
	greedy  = service.Route{Operation: "detachResource", Method: "DELETE", Path: "/schedules/{id}/resources/{arn+}"}
)

func TestParams(t *testing.T) {
	for _, tt := range []struct {
		route service.Route
		want  []service.PathParam
	}{
		{list, nil},
		{comment, []service.PathParam{"id"}},
		{nested, []service.PathParam{"id", "eid"}},
		{greedy, []service.PathParam{"id", "arn"}},
	} {
		assert.Equal(t, tt.want, tt.route.Params(), "%s: Params()", tt.route.Key())
	}
}

func TestURL(t *testing.T) {
	for _, tt := range []struct {
		name   string
		route  service.Route
		values []string
		want   string
	}{
		{"no parameter", list, nil, "/tickets"},
		{"one", comment, []string{"3f1d7e3a"}, "/tickets/3f1d7e3a/comments"},
		{"in path order", nested, []string{"p", "e"}, "/projects/p/escalations/e"},
		{"escaped", comment, []string{"a b/c?d#e%"}, "/tickets/a%20b%2Fc%3Fd%23e%25/comments"},
		{"empty value", comment, []string{""}, "/tickets//comments"},
		{"greedy keeps its slashes", greedy, []string{"s", "arn:aws:ecs:eu-west-1:123456789012:service/c 1/web"},
			"/schedules/s/resources/arn:aws:ecs:eu-west-1:123456789012:service/c%201/web"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.route.URL(tt.values...), "URL(%q)", tt.values)
		})
	}
}

func TestURLQuery(t *testing.T) {
	for _, tt := range []struct {
		name   string
		route  service.Route
		q      service.Values
		values []string
		want   string
	}{
		{"none", list, nil, nil, "/tickets"},
		{"empty values left out", list, service.Values{"caller": "", service.Cursor: ""}, nil, "/tickets"},
		{"in name order, escaped", list, service.Values{service.Cursor: "c+/=", "caller": "poc user"}, nil, "/tickets?caller=poc+user&cursor=c%2B%2F%3D"},
		{"with path values", service.Route{Method: "GET", Path: "/p/{id}/events", Query: []service.QueryParam{service.Limit}},
			service.Values{service.Limit: "100"}, []string{"x"}, "/p/x/events?limit=100"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.route.URLQuery(tt.q, tt.values...), "URLQuery(%v, %q)", tt.q, tt.values)
		})
	}
}

// A call with the wrong parameters is a bug of the client: it panics,
// naming the route and what it takes.
func TestURLPanicsOnWrongParameters(t *testing.T) {
	for _, tt := range []struct {
		name string
		call func()
		want string
	}{
		{"missing", func() { nested.URL("p") }, "GET /projects/{id}/escalations/{eid} takes 2 path parameters [id eid], got 1"},
		{"extra", func() { list.URL("x") }, "GET /tickets takes 0 path parameters [], got 1"},
		{"unknown query parameter", func() { list.URLQuery(service.Values{service.Limit: "5"}) }, `GET /tickets takes no query parameter "limit"`},
		{"missing, with a query", func() { comment.URLQuery(nil) }, "takes 1 path parameters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// testify's Panics* match a whole value; the message is checked
			// for a part of it, as before.
			defer func() {
				r := recover()
				if assert.NotNil(t, r, "no panic, want one saying %q", tt.want) {
					assert.Contains(t, fmt.Sprint(r), tt.want, "panic")
				}
			}()
			tt.call()
		})
	}
}

func TestRouteValidate(t *testing.T) {
	for _, tt := range []struct {
		name  string
		route service.Route
		want  string // "" for valid
	}{
		{"valid", nested, ""},
		{"greedy", greedy, ""},
		{"method", service.Route{Operation: "x", Method: "GET ", Path: "/x"}, "use GET, POST"},
		{"path", service.Route{Operation: "x", Method: "GET", Path: "x"}, "write the path as API Gateway does"},
		{"auth", service.Route{Operation: "x", Method: "GET", Path: "/x", Auth: "none"}, "use service.IAM or service.JWT"},
		{"parameter twice", service.Route{Operation: "x", Method: "GET", Path: "/x/{id}/y/{id}"}, `path parameter "id": name each parameter once`},
		{"empty parameter", service.Route{Operation: "x", Method: "GET", Path: "/x/{}"}, `path parameter "": name each parameter once`},
		{"query twice", service.Route{Operation: "x", Method: "GET", Path: "/x", Query: []service.QueryParam{service.Limit, service.Limit}}, `query parameter "limit": list each parameter once`},
		{"no operation", service.Route{Method: "GET", Path: "/x"}, `operation "": name it in lower camel case`},
		{"operation in upper camel case", service.Route{Operation: "GetX", Method: "GET", Path: "/x"}, `operation "GetX": name it in lower camel case`},
		{"operation with a separator", service.Route{Operation: "get_x", Method: "GET", Path: "/x"}, `operation "get_x": name it in lower camel case`},
		{"operation of a path", service.Route{Operation: "get/x", Method: "GET", Path: "/x"}, `operation "get/x"`},
		{"operation too long", service.Route{Operation: "x" + strings.Repeat("y", 64), Method: "GET", Path: "/x"}, `name it in lower camel case`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.route.Validate()
			if tt.want == "" {
				assert.NoError(t, err, "Validate()")
			} else {
				assert.ErrorContains(t, err, tt.want, "Validate()")
			}
		})
	}
}

// An operation names one route of the whole contract, across its
// functions: the document's operationIds are unique, and so are the typed
// client's methods.
func TestContractValidateOperationOnce(t *testing.T) {
	a := service.Route{Operation: "getThing", Method: "GET", Path: "/things/{id}"}
	b := service.Route{Operation: "getThing", Method: "GET", Path: "/other/{id}"}
	c := service.Contract{Name: "x", Functions: []service.Function{
		{Name: "x-api", Kind: service.HTTP, Routes: []service.Route{a}},
		{Name: "x-admin", Kind: service.HTTP, Routes: []service.Route{b}},
	}}
	assert.ErrorContains(t, c.Validate(), `operation "getThing" names both "GET /things/{id}" and "GET /other/{id}"`, "Validate()")
	c.Functions[1].Routes[0].Operation = "getOther"
	assert.NoError(t, c.Validate(), "Validate() with distinct operations")
}

// A service's HTTP functions share its one API: a route is served by one
// of them, and HTTPFunctions lists them in order.
func TestContractValidateRouteOnce(t *testing.T) {
	get := service.Route{Operation: "getThing", Method: "GET", Path: "/things/{id}"}
	put := service.Route{Operation: "putThing", Method: "PUT", Path: "/things/{id}"}
	c := service.Contract{Name: "x", Functions: []service.Function{
		{Name: "x", Kind: service.HTTP, Routes: []service.Route{get}},
		{Name: "x-job", Kind: service.Schedule},
		{Name: "x-writes", Kind: service.HTTP, Routes: []service.Route{put}},
	}}
	require.NoError(t, c.Validate(), "Validate()")
	names := []string{}
	for _, f := range c.HTTPFunctions() {
		names = append(names, f.Name)
	}
	assert.Equal(t, []string{"x", "x-writes"}, names, "HTTPFunctions")
	c.Functions[2].Routes = append(c.Functions[2].Routes, service.Route{Operation: "getThingAgain", Method: "GET", Path: "/things/{id}"})
	assert.ErrorContains(t, c.Validate(), `route "GET /things/{id}" declared twice (functions "x" and "x-writes")`, "Validate()")
}
