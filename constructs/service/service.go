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
	// Tables in document order.
	Tables []Table
	// Functions in deployment order.
	Functions []Function
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
	// Schedule: an EventBridge Scheduler schedule (platform/schedule).
	Schedule Kind = "schedule"
	// Queue: an SQS event source mapping reporting batch item failures
	// (platform/queue).
	Queue Kind = "queue"
	// Stream: a DynamoDB stream event source mapping reporting batch item
	// failures (platform/streams).
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

// Route is one method and path of an HTTP API.
type Route struct {
	// Method is the HTTP method, e.g. "GET".
	Method string
	// Path is the path as API Gateway spells it: "/tickets/{id}", with a
	// greedy last segment written "{arn+}".
	Path string
	// Auth is the route's authorization.
	//
	// Default: IAM.
	Auth Auth
	// Query lists the query parameters the route takes; the handler
	// refuses any other.
	//
	// Default: none.
	Query []string
	// Idempotent routes take an Idempotency-Key header: a client that
	// retries a create with the same key gets the first answer again
	// instead of a second item (lambdas/platform/idempotency).
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
	return nil
}

// Validate checks every function and route of c, naming each problem.
func (c Contract) Validate() error {
	var errs []string
	seen := map[string]bool{}
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
		keys := map[string]bool{}
		for _, r := range f.Routes {
			if err := r.Validate(); err != nil {
				errs = append(errs, err.Error())
			}
			if keys[r.Key()] {
				errs = append(errs, fmt.Sprintf("route %q declared twice", r.Key()))
			}
			keys[r.Key()] = true
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("service %s: %s", c.Name, strings.Join(errs, "; "))
	}
	return nil
}

// ScheduleInput is the target input of every schedule: JSON in which
// EventBridge Scheduler replaces the context attributes, so a job learns
// the fire time it serves and keys its work on it (platform/schedule
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
