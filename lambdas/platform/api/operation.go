package api

import "github.com/dynastack/dynastack/constructs/service"

// Operation is what a route's OpenAPI operation says beyond the contract
// (lambdas/devtools/openapi writes docs/api/<service>.openapi.json from
// them): the Go types of its request and answers and the bounds of its
// query parameters. The route's method, path, parameter names,
// authorization and Idempotency-Key come from the contract, never from
// here. It is plain data: a Lambda main that never calls a service's
// Operations links none of it.
type Operation struct {
	// Route is the contract's route.
	Route service.Route
	// Summary is one line on what the route does.
	Summary string
	// Body is a value of the request body's type (what the handler
	// decodes with DecodeJSON); nil for a route without a body.
	Body any
	// Answers are the success answers, usually one.
	Answers []Answer
	// Query bounds the route's query parameters, by the contract's
	// constants; a parameter of the route not listed is a plain string.
	Query map[service.QueryParam]Param
	// UUIDs are the path parameters read with PathUUID (canonical UUIDs).
	UUIDs []service.PathParam
	// ETag: the success answers carry the resource's ETag.
	ETag bool
	// IfMatch: the route reads If-Match (a conditional write).
	IfMatch bool
	// Example is a request body a client may send, shown in the document.
	Example any
	// Headers are request headers the handler reads, by name, with what
	// they say (none is required by the document: a handler names a
	// missing one in its 400).
	Headers map[string]string
	// Secrets are the top-level answer fields the handler marks with
	// Secret: a replay of an Idempotent route leaves them out.
	Secrets []string
}

// Answer is one success answer of an Operation.
type Answer struct {
	// Status is the HTTP status, e.g. 200.
	Status int
	// Body is a value of the answer's type; nil for an answer without a
	// body (204).
	Body any
	// Location: the answer carries the created resource's Location.
	Location bool
}

// Param bounds a query parameter.
type Param struct {
	// Integer: the value is a decimal integer from Min to Max.
	Integer  bool
	Min, Max int
	// Default is the value the handler uses when the parameter is absent
	// (0: none, or the handler's own rule the description states).
	Default int
	// Enum lists the values the handler accepts.
	Enum []string
	// Required: the handler refuses the request without it.
	Required bool
	// Format is the string's format ("date-time", "date").
	Format string
	// Description says what the parameter does.
	Description string
}

// PageParams are the query parameters of a paginated listing: Limit from 1
// to max (def when absent, 0 for "the handler's own default") and the
// opaque Cursor.
func PageParams(def, max int) map[service.QueryParam]Param {
	return map[service.QueryParam]Param{
		service.Limit:  {Integer: true, Min: 1, Max: max, Default: def, Description: "page size"},
		service.Cursor: {Description: "the cursor of the previous page's answer: opaque, bound to the query it came from"},
	}
}
