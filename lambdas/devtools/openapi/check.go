package openapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/dynastack/dynastack/constructs/service"
)

// Load reads and validates the document at path (kin-openapi's loader and
// Validate, OpenAPI 3.1 and JSON Schema 2020-12).
func Load(path string) (*openapi3.T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse loads and validates a document.
func Parse(b []byte) (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return doc, nil
}

// Checker checks requests and answers of one service's API against its
// document: each request the document refuses must be refused (a 4xx), and
// each answer must be one the document declares for the operation (status,
// headers, body).
type Checker struct {
	doc    *openapi3.T
	mux    *http.ServeMux
	routes map[string]service.Route
}

// NewChecker checks against doc the routes of c.
func NewChecker(doc *openapi3.T, c service.Contract) *Checker {
	ch := &Checker{doc: doc, mux: http.NewServeMux(), routes: map[string]service.Route{}}
	for _, f := range c.Functions {
		for _, r := range f.Routes {
			ch.mux.HandleFunc(r.Pattern(), func(http.ResponseWriter, *http.Request) {})
			ch.routes[r.Pattern()] = r
		}
	}
	return ch
}

// Exchange is one request and its answer.
type Exchange struct {
	Request *http.Request
	Body    []byte
	Status  int
	Header  http.Header
	Answer  []byte
}

// Check checks one exchange. A request that matches no route of the
// contract is not the document's business (the router's 404 and 405).
func (c *Checker) Check(x Exchange) error {
	_, pattern := c.mux.Handler(x.Request)
	route, ok := c.routes[pattern]
	if !ok {
		return nil
	}
	path := openAPIPath(route.Path)
	item := c.doc.Paths.Value(path)
	if item == nil {
		return fmt.Errorf("%s: the document has no path %s", route.Key(), path)
	}
	op := item.GetOperation(route.Method)
	if op == nil {
		return fmt.Errorf("%s: the document has no operation", route.Key())
	}
	// The path values as net/http matched them.
	m := http.NewServeMux()
	params := map[string]string{}
	m.HandleFunc(route.Pattern(), func(_ http.ResponseWriter, r *http.Request) {
		for _, p := range route.Params() {
			params[string(p)] = r.PathValue(string(p))
		}
	})
	probe := x.Request.Clone(context.Background())
	probe.Body = http.NoBody
	m.ServeHTTP(httptest.NewRecorder(), probe)

	req := x.Request.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(x.Body))
	if len(x.Body) > 0 && req.Header.Get("Content-Type") == "" {
		// The services read every body as JSON whatever it is labelled
		// (api.DecodeJSON); the tests' requests leave the label out.
		req.Header.Set("Content-Type", "application/json")
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Options: opts,
		Route: &routers.Route{Spec: c.doc, Path: path, PathItem: item, Method: route.Method, Operation: op},
	}
	var errs []error
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		if x.Status < 400 || x.Status >= 500 {
			errs = append(errs, fmt.Errorf("%s %s: the document refuses the request, the service answered %d: %w", route.Method, x.Request.URL, x.Status, err))
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: x.Status, Header: x.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	out.SetBodyBytes(x.Answer)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		errs = append(errs, fmt.Errorf("%s %s: answer %d does not match the document: %w (body %s)", route.Method, x.Request.URL, x.Status, err, truncate(x.Answer)))
	}
	for name := range x.Header {
		if !declaredHeader(op, x.Status, name) {
			errs = append(errs, fmt.Errorf("%s %s: answer %d has header %s the document does not declare", route.Method, x.Request.URL, x.Status, name))
		}
	}
	return errors.Join(errs...)
}

// headersEveryAnswer are the headers of every answer (the platform's),
// which no operation lists.
var headersEveryAnswer = []string{"Content-Type", "X-Content-Type-Options", "X-Request-Id"}

// replayHeaders are the ones only a declared replay may carry.
var replayHeaders = []string{"Idempotent-Replayed", "Idempotent-Redacted", "Etag", "Location", "Retry-After"}

func declaredHeader(op *openapi3.Operation, status int, name string) bool {
	name = http.CanonicalHeaderKey(name)
	for _, h := range headersEveryAnswer {
		if http.CanonicalHeaderKey(h) == name {
			return true
		}
	}
	found := false
	for _, h := range replayHeaders {
		if http.CanonicalHeaderKey(h) == name {
			found = true
		}
	}
	if !found {
		return true // not one whose presence the document states
	}
	resp := op.Responses.Status(status)
	if resp == nil {
		resp = op.Responses.Default()
	}
	if resp == nil || resp.Value == nil {
		return false
	}
	for h := range resp.Value.Headers {
		if http.CanonicalHeaderKey(h) == name {
			return true
		}
	}
	return name == "Retry-After" && status == http.StatusConflict // in_progress
}

func truncate(b []byte) string {
	s := string(b)
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return strings.TrimSpace(s)
}

// Handler serves h, checking every exchange with c; fail receives each
// mismatch (t.Errorf in a test).
func (c *Checker) Handler(h http.Handler, fail func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		orig := r.Clone(context.Background())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if err := c.Check(Exchange{Request: orig, Body: body, Status: rec.Code, Header: rec.Header(), Answer: rec.Body.Bytes()}); err != nil {
			fail(err)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}
