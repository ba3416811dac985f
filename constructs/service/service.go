// Package service is the shape of a service contract: what a design
// document fixes about a service (its tables, their index and variable
// names, its Lambda functions and their kinds, its HTTP routes) declared
// once, as plain data, in the service's contract package
// (constructs/<service>/contract).
//
// Both sides read the same declaration: the stacks build functions,
// environments, routes and authorizers from it, and the Lambda code
// registers its handlers against it. That is why this package and every
// contract package import nothing: a Lambda binary links them without
// linking any CDK code, and another team's CDK app can import a service's
// index and variable names without importing its Lambda code.
package service

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Variables every function of every service gets.
const (
	// EnvFunction names the function (Function.Name): its logs, its
	// recorded calls and the local runner's mount all go by it.
	EnvFunction = "DYNASTACK_SERVICE"
	// EnvStage is the stage the function is deployed in.
	EnvStage = "DYNASTACK_STAGE"
	// EnvCursorKey optionally sets the key that signs list cursors. Without
	// it a service derives one from its table name, which still detects
	// tampering but is not secret.
	EnvCursorKey = "DYNASTACK_CURSOR_KEY"
)

// Contract is one service: the stack id and the short name of its design
// document.
type Contract struct {
	// Name is the stack id and the service tag of its tables, e.g. itsm.
	Name string
	// Description names the document, e.g. "ITSM ticket PoC (document 003)".
	Description string
	// APIVersion is the version of the service's HTTP API as its OpenAPI
	// document states it (info.version, docs/api/<name>.openapi.json): a
	// change that breaks clients bumps it, with an entry in
	// docs/api/CHANGELOG.md (make apidiff).
	APIVersion string
	// Tables in document order.
	Tables []Table
	// Attributes are the names of the item attributes, in any of the
	// tables, that the service's code names: the key, index and TTL
	// attributes and every attribute an expression, a key or an item
	// built by hand refers to. The contract declares each as a constant
	// and lists it here, so that a test can find the name written again
	// anywhere else (lambdas/services, TestNamesComeFromTheContract).
	// Struct tags (`dynamodbav:"…"`) repeat some of them: Go cannot take
	// a tag from a constant.
	//
	// Default: none.
	Attributes []string
	// KeyParts are the fixed parts of the tables' key values: the
	// prefixes of composite keys ("ACCOUNT#") and the constant values
	// ("METADATA"). The contract declares each as a constant, and a key of
	// several parts as a function that builds it, and lists the parts
	// here for the same test.
	//
	// Default: none.
	KeyParts []string
	// Functions in deployment order. A service has at most one HTTP API:
	// every HTTP function's routes are routes of it, each served by the
	// function that lists it (the API Gateway route's integration), so a
	// service splits its API into functions without a client noticing.
	Functions []Function
}

// HTTPFunctions are c's HTTP functions, in order: their routes together
// are c's API, served at one base URL. The first names the API.
func (c Contract) HTTPFunctions() []Function {
	var fns []Function
	for _, f := range c.Functions {
		if f.Kind == HTTP {
			fns = append(fns, f)
		}
	}
	return fns
}

// Function returns the function named name.
func (c Contract) Function(name string) (Function, bool) {
	i := slices.IndexFunc(c.Functions, func(f Function) bool { return f.Name == name })
	if i < 0 {
		return Function{}, false
	}
	return c.Functions[i], true
}

// Table is a table of a service as its code finds it.
type Table struct {
	// BaseName is the documented table name; the physical name of a stage
	// is BaseName + "-" + stage unless the stage overrides it.
	BaseName string
	// Env is the variable that carries the physical name to a function.
	Env string
}

// Kind is how a function is invoked.
type Kind string

// Function kinds.
const (
	// HTTP: API Gateway HTTP API (payload 2.0) routes.
	HTTP Kind = "http"
	// Schedule: an EventBridge Scheduler schedule (platform/fn, schedule.go).
	Schedule Kind = "schedule"
	// Queue: an SQS event source mapping reporting batch item failures
	// (platform/fn, queue.go).
	Queue Kind = "queue"
	// Stream: a DynamoDB stream event source mapping reporting batch item
	// failures (platform/fn, streams.go).
	Stream Kind = "stream"
)

// Function is one Lambda function. Its main package is lambdas/cmd/<Name>.
type Function struct {
	// Name is the function's name in the service, e.g. rezagent-scheduler.
	Name string
	// Kind says what invokes it.
	Kind Kind
	// Description is the function's description in AWS.
	Description string
	// Routes are the HTTP routes of an HTTP function, in the order the API
	// declares them. Empty for every other kind.
	Routes []Route
	// Metrics are the business metrics the function emits (metrics.go),
	// besides what the platform emits for every function of its kind
	// (PlatformMetrics).
	Metrics []Metric
}

// PlatformMetrics are the metrics the runtime platform emits for every
// function of kind k, whatever its service and routes: Unavailable for
// each 503 an HTTP function answers. An HTTP function emits its
// RouteLatency too (AllMetrics), whose route values are its own.
func PlatformMetrics(k Kind) []Metric {
	if k == HTTP {
		return []Metric{Unavailable}
	}
	return nil
}

// AllMetrics are f's own metrics and the platform's for its kind: an
// HTTP function's RouteLatency too.
func (f Function) AllMetrics() []Metric {
	all := append(slices.Clone(f.Metrics), PlatformMetrics(f.Kind)...)
	if f.Kind == HTTP {
		all = append(all, RouteLatency(f))
	}
	return all
}

// Package is the function's main package in the lambdas module.
func (f Function) Package() string { return "./cmd/" + f.Name }

// Auth is how API Gateway authorizes a route.
type Auth string

// Route authorizations.
const (
	// IAM: SigV4-signed by a principal IAM allows execute-api:Invoke (the
	// default: an unauthenticated route would be public on the internet).
	IAM Auth = ""
	// JWT: a bearer token of the stage's identity provider, checked by the
	// API's JWT authorizer (signature, issuer, audience, exp, nbf).
	JWT Auth = "jwt"
)

// APIStage is the one stage of every HTTP API (API Gateway's $default,
// served at the API's root): execute-api:Invoke grants name it rather than
// "*".
const APIStage = "$default"

// QueryParam is the name of a query parameter (?caller=…). A contract
// declares each of its parameters once, as a constant, and lists it in the
// Query of the routes that take it; the handler reads it by that constant
// (lambdas/platform/api.Query) and a client sets it by it
// (Route.URLQuery), so renaming one is a compile error, not a 400.
type QueryParam string

// String returns the parameter's name.
func (p QueryParam) String() string { return string(p) }

// The query parameters of every paginated listing: the platform reads them
// (lambdas/platform/api.PageLimit, the services' cursors), so they are
// declared here rather than in each contract.
const (
	// Limit is the page size a caller asks for.
	Limit QueryParam = "limit"
	// Cursor is the next_cursor of the previous page.
	Cursor QueryParam = "cursor"
)

// PathParam is the name of a path parameter: what Route.Path writes
// between braces ("{id}"; a greedy "{arn+}" is arn). A contract declares
// each as a constant beside the routes whose paths name it, and a handler
// reads the value by that constant (lambdas/platform/api.PathValue).
type PathParam string

// String returns the parameter's name.
func (p PathParam) String() string { return string(p) }

// Values are the values of a request's query parameters, by name, for
// Route.URLQuery.
type Values map[QueryParam]string

// Route is one method and path of an HTTP API.
type Route struct {
	// Operation is the route's name for a client: its operationId in the
	// service's OpenAPI document (docs/api/<service>.openapi.json), from
	// which the typed client (lambdas/client/<service>) names its method
	// (Operation "createTicket": CreateTicketWithResponse) and types
	// (CreateTicketJSONRequestBody, CreateTicketParams). It is the route's
	// Go name in its contract in lower camel case (CreateTicket:
	// "createTicket"; constructs/catalog checks it), so a route has one
	// name in the contract, the document and the clients. A Go string
	// cannot be read from a variable's name, hence written here.
	// Renaming it renames the client's method: a compile error for every
	// Go client, which oasdiff reports but does not count as breaking
	// (the wire is unchanged).
	Operation string
	// Method is the HTTP method, e.g. "GET".
	Method string
	// Path is the path as API Gateway spells it: "/tickets/{id}", with a
	// greedy last segment written "{arn+}".
	Path string
	// Auth is the route's authorization.
	//
	// Default: IAM.
	Auth Auth
	// Query lists the query parameters the route takes, the contract's
	// constants (service.Limit and service.Cursor for a listing); the
	// handler refuses any other.
	//
	// Default: none.
	Query []QueryParam
	// Idempotent routes take an Idempotency-Key header: a client that
	// retries a create with the same key gets the first answer again
	// instead of a second item (lambdas/platform/api, idempotency.go).
	//
	// Default: false.
	Idempotent bool
}

// Key is the route as API Gateway names it: "GET /tickets/{id}".
func (r Route) Key() string { return r.Method + " " + r.Path }

// Pattern is the route as a net/http ServeMux pattern: "GET /tickets/{id}",
// with a greedy "{arn+}" written "{arn...}".
func (r Route) Pattern() string {
	p := r.Path
	if strings.HasSuffix(p, "+}") {
		p = strings.TrimSuffix(p, "+}") + "...}"
	}
	return r.Method + " " + p
}

// Params lists the path parameters of the route in the order of its path:
// "/projects/{id}/escalations/{eid}" has id and eid.
func (r Route) Params() []PathParam {
	var out []PathParam
	for _, seg := range strings.Split(r.Path, "/") {
		if name, ok := paramOf(seg); ok {
			out = append(out, name)
		}
	}
	return out
}

// paramOf is the parameter a path segment names, if it names one.
func paramOf(seg string) (PathParam, bool) {
	if len(seg) < 2 || seg[0] != '{' || seg[len(seg)-1] != '}' {
		return "", false
	}
	return PathParam(strings.TrimSuffix(seg[1:len(seg)-1], "+")), true
}

// URL is the route's path with its path parameters replaced by values, in
// the order of Params, each escaped as a path segment (url.PathEscape): for
// GetTicket ("/tickets/{id}"), URL("a b") is "/tickets/a%20b". A greedy
// parameter's value may span segments: its slashes are kept and each part
// between them is escaped.
//
// It panics when the number of values is not the number of parameters:
// like an index out of range, that is a bug of the caller, and every
// client of the repository runs its calls in a test.
func (r Route) URL(values ...string) string {
	if want := r.Params(); len(values) != len(want) {
		panic(fmt.Sprintf("service: %s takes %d path parameters %v, got %d values", r.Key(), len(want), want, len(values)))
	}
	segs := strings.Split(r.Path, "/")
	for i, seg := range segs {
		if _, ok := paramOf(seg); !ok {
			continue
		}
		v := values[0]
		values = values[1:]
		if strings.HasSuffix(seg, "+}") {
			parts := strings.Split(v, "/")
			for j, p := range parts {
				parts[j] = url.PathEscape(p)
			}
			segs[i] = strings.Join(parts, "/")
		} else {
			segs[i] = url.PathEscape(v)
		}
	}
	return strings.Join(segs, "/")
}

// URLQuery is URL followed by the query string of q: its non-empty
// values, encoded in the order of their names (as url.Values.Encode does),
// with no "?" when none is left. It panics on a parameter that is not in
// the route's Query, which the route would answer with a 400.
func (r Route) URLQuery(q Values, values ...string) string {
	path := r.URL(values...)
	enc := url.Values{}
	for p, v := range q {
		if !slices.Contains(r.Query, p) {
			panic(fmt.Sprintf("service: %s takes no query parameter %q (it takes %v)", r.Key(), p, r.Query))
		}
		if v != "" {
			enc.Set(string(p), v)
		}
	}
	if len(enc) == 0 {
		return path
	}
	return path + "?" + enc.Encode()
}

// Validate names the value and the fix of a malformed route.
func (r Route) Validate() error {
	switch r.Method {
	case "GET", "POST", "PUT", "PATCH", "DELETE":
	default:
		return fmt.Errorf("route %q: method %q: use GET, POST, PUT, PATCH or DELETE", r.Key(), r.Method)
	}
	if !strings.HasPrefix(r.Path, "/") || strings.ContainsAny(r.Path, " ?#") {
		return fmt.Errorf("route %q: write the path as API Gateway does, e.g. /tickets/{id}", r.Key())
	}
	if r.Auth != IAM && r.Auth != JWT {
		return fmt.Errorf("route %q: auth %q: use service.IAM or service.JWT", r.Key(), r.Auth)
	}
	if !validOperation(r.Operation) {
		return fmt.Errorf("route %q: operation %q: name it in lower camel case, letters and digits, starting with a lower-case letter (e.g. createTicket)", r.Key(), r.Operation)
	}
	seen := map[PathParam]bool{}
	for _, p := range r.Params() {
		if p == "" || seen[p] {
			return fmt.Errorf("route %q: path parameter %q: name each parameter once", r.Key(), p)
		}
		seen[p] = true
	}
	for i, q := range r.Query {
		if q == "" || slices.Contains(r.Query[:i], q) {
			return fmt.Errorf("route %q: query parameter %q: list each parameter once", r.Key(), q)
		}
	}
	return nil
}

// validOperation: an operationId every client generator turns into an
// identifier as it is (oapi-codegen upper-cases the first letter only):
// [a-z][A-Za-z0-9]*, at most 64 characters.
func validOperation(op string) bool {
	if op == "" || len(op) > 64 || op[0] < 'a' || op[0] > 'z' {
		return false
	}
	for _, c := range op {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Validate checks every function and route of c, naming each problem: an
// operation is named once in the contract (operationIds are unique in a
// document).
func (c Contract) Validate() error {
	var errs []string
	seen := map[string]bool{}
	operations := map[string]string{}
	keys := map[string]string{} // route key → its function
	for _, f := range c.Functions {
		if seen[f.Name] {
			errs = append(errs, fmt.Sprintf("function %q declared twice", f.Name))
		}
		seen[f.Name] = true
		switch f.Kind {
		case HTTP:
			if len(f.Routes) == 0 {
				errs = append(errs, fmt.Sprintf("HTTP function %q has no route", f.Name))
			}
		case Schedule, Queue, Stream:
			if len(f.Routes) > 0 {
				errs = append(errs, fmt.Sprintf("%s function %q has routes: only an HTTP function serves routes", f.Kind, f.Name))
			}
		default:
			errs = append(errs, fmt.Sprintf("function %q: kind %q: use service.HTTP, Schedule, Queue or Stream", f.Name, f.Kind))
		}
		metrics := map[string]bool{}
		for _, m := range f.AllMetrics() {
			if err := m.Validate(); err != nil {
				errs = append(errs, fmt.Sprintf("function %q: %v", f.Name, err))
			}
			if metrics[m.Name] {
				errs = append(errs, fmt.Sprintf("function %q: metric %q listed twice", f.Name, m.Name))
			}
			metrics[m.Name] = true
		}
		for _, r := range f.Routes {
			if err := r.Validate(); err != nil {
				errs = append(errs, err.Error())
			}
			if other, dup := keys[r.Key()]; dup {
				errs = append(errs, fmt.Sprintf("route %q declared twice (functions %q and %q): one function serves a route", r.Key(), other, f.Name))
			}
			keys[r.Key()] = f.Name
			if other, dup := operations[r.Operation]; dup && r.Operation != "" {
				errs = append(errs, fmt.Sprintf("operation %q names both %q and %q", r.Operation, other, r.Key()))
			}
			operations[r.Operation] = r.Key()
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("service %s: %s", c.Name, strings.Join(errs, "; "))
	}
	return nil
}

// ScheduleInput is the target input of every schedule: JSON in which
// EventBridge Scheduler replaces the context attributes, so a job learns
// the fire time it serves and keys its work on it (platform/fn, schedule.go
// decodes it).
const ScheduleInput = `{"schedule_arn":"<aws.scheduler.schedule-arn>","scheduled_time":"<aws.scheduler.scheduled-time>","execution_id":"<aws.scheduler.execution-id>","attempt_number":"<aws.scheduler.attempt-number>"}`

// The metric a function emits (CloudWatch embedded metric format, in its
// log) for each answer of 503 unavailable, with the dimension
// MetricDimension = the function's name. The stacks subtract it from the
// API's 5xx count: a throttled table is a client's back-off, alarmed as
// the table's throttle events, not a server error.
const (
	MetricNamespace   = "dynastack"
	MetricUnavailable = "Unavailable"
	MetricDimension   = "service"
)

// Unavailable is the metric of each 503 unavailable answer (platform/api).
var Unavailable = Metric{Name: MetricUnavailable, Unit: Count,
	Description: "answers of 503 unavailable (DynamoDB throttled or failed after the retries)"}

// RouteLatency: an HTTP function's time to answer each request
// (platform/api's Instrument, from the request to the last byte written,
// in the function), by route and by status class. Its SampleCount is the
// requests, so one metric gives a route's requests, its 4xx, 5xx and 503
// answers and its p50 and p99 (docs/functions.md, "Per-route metrics").
// The route is the contract's route key, a bounded set; a request no
// route matched (a 404 or 405 of the router) counts as OtherValue.
const (
	MetricRouteLatency = "RouteLatency"
	DimRoute           = "route"
	DimStatus          = "status"
)

// Status classes of RouteLatency's DimStatus: each answer is in exactly
// one, so StatusServerError excludes StatusUnavailable (as the API's
// ServerErrors alarm does), and StatusOK holds every answer below 400
// (the router's rare redirect among them).
const (
	StatusOK          = "2xx"
	StatusClientError = "4xx"
	StatusServerError = "5xx"
	StatusUnavailable = "503"
)

// StatusClasses lists DimStatus's values.
var StatusClasses = []string{StatusOK, StatusClientError, StatusServerError, StatusUnavailable}

// StatusClass is the class of an HTTP status.
func StatusClass(status int) string {
	switch {
	case status == 503:
		return StatusUnavailable
	case status >= 500:
		return StatusServerError
	case status >= 400:
		return StatusClientError
	default:
		return StatusOK
	}
}

// RouteLatency is f's route latency metric: DimRoute takes f's route keys
// and OtherValue.
func RouteLatency(f Function) Metric {
	routes := make([]string, 0, len(f.Routes)+1)
	for _, r := range f.Routes {
		routes = append(routes, r.Key())
	}
	return Metric{Name: MetricRouteLatency, Unit: Milliseconds,
		Description: "time to answer each request, by route and status class",
		Dimensions: []Dimension{
			{Name: DimRoute, Values: append(routes, OtherValue)},
			{Name: DimStatus, Values: StatusClasses},
		}}
}
