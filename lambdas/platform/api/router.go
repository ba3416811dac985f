package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/dynastack/dynastack/constructs/service"
)

// HandlerFunc is an HTTP handler that returns its failure instead of writing
// it; the Router writes it with WriteError.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Router serves the routes of one function's contract: a net/http
// ServeMux (the contract's routes as Go 1.22 patterns, e.g. "GET
// /tickets/{id}") whose unmatched requests are answered with the JSON error
// shape instead of the mux's text/plain 404 and 405 pages.
//
// Routes come from the contract only: a handler for a route the contract
// does not declare panics in Handle, and Done panics naming every contract
// route without a handler, so what API Gateway forwards and what the
// function serves cannot drift apart (both happen when the handler is
// built: at init in Lambda, in every test).
type Router struct {
	mux      *http.ServeMux
	fn       service.Function
	patterns []string
	around   func(service.Route, http.Handler) http.Handler
}

// Around wraps the handler of every route registered after it with mw,
// which learns the route from the contract (api.IdempotencyTable.Middleware
// acts on the routes marked Idempotent).
func (rt *Router) Around(mw func(service.Route, http.Handler) http.Handler) *Router {
	rt.around = mw
	return rt
}

// Routed is a handler that can list its route patterns, so tests can check
// that what the handler serves and what API Gateway forwards are the same.
type Routed interface {
	Patterns() []string
}

// Patterns lists the registered patterns in registration order.
func (rt *Router) Patterns() []string { return append([]string(nil), rt.patterns...) }

// NewRouter returns a Router for the routes of fn's contract, none handled
// yet.
func NewRouter(fn service.Function) *Router { return &Router{mux: http.NewServeMux(), fn: fn} }

// Handle registers h for route, which must be one of the contract's. Every
// path parameter must be a key (see [ids.CheckKey]: UTF-8, bounded, none
// of '#', '/', '*', '?', whitespace or control characters), else the
// request is a 400 naming the parameter before h runs. The route's Query
// lists the query parameters it takes; any other parameter, a
// parameter given twice or a query that does not parse is a 400 before h
// runs, so no route silently ignores a misspelt ?limt= (and h never acts on
// a request it misread).
func (rt *Router) Handle(route service.Route, h HandlerFunc) {
	// Method and Path, not Key(): a key is built by concatenation, and this
	// runs for each route against every route at each cold start.
	if !slices.ContainsFunc(rt.fn.Routes, func(r service.Route) bool { return r.Method == route.Method && r.Path == route.Path }) {
		panic(fmt.Sprintf("api: %s is not a route of %s's contract: declare it there first", route.Key(), rt.fn.Name))
	}
	pattern, query := route.Pattern(), route.Query
	if slices.Contains(rt.patterns, pattern) {
		panic(fmt.Sprintf("api: %s handled twice", route.Key()))
	}
	rt.patterns = append(rt.patterns, pattern)
	var serve http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			WriteError(w, r, err)
		}
	})
	if rt.around != nil {
		serve = rt.around(route, serve)
	}
	params := pathParams(route)
	rt.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if rec, ok := w.(*recorder); ok {
			// Routed: the answer is the route's, to the real writer.
			rec.routed = true
			w = rec.ResponseWriter
		}
		var v Validator
		checkPath(&v, r, params)
		if r.URL.RawQuery != "" {
			v.Query(r, query...)
		}
		if err := v.Err(); err != nil {
			WriteError(w, r, err)
			return
		}
		serve.ServeHTTP(w, r)
	})
}

// Done returns rt once every route of the contract has a handler, and
// panics naming the routes that have none.
func (rt *Router) Done() *Router {
	var missing []string
	for _, r := range rt.fn.Routes {
		if !slices.Contains(rt.patterns, r.Pattern()) {
			missing = append(missing, r.Key())
		}
	}
	if len(missing) > 0 {
		panic(fmt.Sprintf("api: %s's contract routes without a handler: %s", rt.fn.Name, strings.Join(missing, ", ")))
	}
	return rt
}

// ServeHTTP implements http.Handler. The mux matches a request once: a
// route's handler takes the real writer out of the recorder and answers;
// otherwise the mux's own answer (404, 405 with the allowed methods it
// knows, or a redirect to a cleaned path) lands in the recorder and is
// rewritten as a JSON error. A path with empty, "." or ".." segments is a
// 400, not the mux's 307 to the cleaned path: a client that follows a 307
// repeats its method there, and a DELETE of …/resources/{arn+} whose ARN
// held "//" would delete another resource. (Asking the mux for the
// handler first and then serving would match twice: 1.2 µs a request.)
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w}
	rt.mux.ServeHTTP(rec, r)
	if rec.routed {
		return
	}
	switch rec.status {
	case http.StatusNotFound:
		WriteError(w, r, NotFound("no route for %s %s", r.Method, r.URL.Path))
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", rec.header.Get("Allow"))
		WriteError(w, r, &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
			Message: "method " + r.Method + " not allowed; allowed: " + rec.header.Get("Allow")})
	default: // a redirect to the cleaned path
		WriteError(w, r, BadRequest("path %q has empty, '.' or '..' segments; send the path as the route writes it (%s)", r.URL.Path, rec.header.Get("Location")))
	}
}

// recorder is the writer the mux gets: a route's handler answers through
// the ResponseWriter it carries; the mux's own answer's status and
// headers are kept here (its body is replaced).
type recorder struct {
	http.ResponseWriter
	routed bool
	header http.Header
	status int
}

func (r *recorder) Header() http.Header {
	if r.header == nil {
		r.header = http.Header{}
	}
	return r.header
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return len(b), nil
}
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

type loggerKey struct{}

// WithLogger stores the logger that WriteError and the middleware use.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

func logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// Logger returns the request's logger (see Instrument).
func Logger(ctx context.Context) *slog.Logger { return logger(ctx) }
