// Package openapi writes each service's OpenAPI 3.1 document
// (docs/api/<service>.openapi.json) from its contract (routes, path and
// query parameter names, authorization, Idempotency-Key, API version) and
// its Operations (lambdas/services/<service>/openapi.go: the Go types its
// handlers decode and answer, the bounds of its query parameters), with
// kin-openapi's openapi3 model and openapi3gen's reflection of the Go
// types; and checks requests and answers against a document (Checker)
// with openapi3filter. Nothing here is linked by a Lambda main.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
)

// Version is the OpenAPI version of every document.
const Version = "3.1.0"

// Dir is where the documents live, relative to the repository root.
const Dir = "docs/api"

// File is the document of the service named name, relative to the root.
func File(name string) string { return Dir + "/" + name + ".openapi.json" }

// Security scheme names.
const (
	schemeIAM = "sigv4"
	schemeJWT = "jwt"
)

// Document is the OpenAPI document of c's HTTP API: one operation per
// route of its HTTP functions, each described by its entry of ops (exactly
// one per route).
func Document(c service.Contract, ops []api.Operation) (*openapi3.T, error) {
	byKey := map[string]api.Operation{}
	for _, op := range ops {
		if _, dup := byKey[op.Route.Key()]; dup {
			return nil, fmt.Errorf("%s is described twice", op.Route.Key())
		}
		byKey[op.Route.Key()] = op
	}
	if c.APIVersion == "" {
		return nil, fmt.Errorf("the contract has no APIVersion")
	}
	// Operations are named once, in the contract (service.Route.Operation),
	// and Validate refuses a missing, malformed or repeated one.
	if err := c.Validate(); err != nil {
		return nil, err
	}
	doc := &openapi3.T{
		OpenAPI: Version,
		Info: &openapi3.Info{
			Title:   c.Name,
			Version: c.APIVersion,
			Description: c.Description + ". Generated from the contract (constructs/" + c.Name +
				"/contract) and the handlers' Go types (lambdas/services/" + c.Name + "/openapi.go) by " +
				"lambdas/devtools/cmd/openapi; do not edit. Conventions: docs/api/conventions.md.",
		},
		Paths: openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas:         openapi3.Schemas{"Error": errorSchema()},
			SecuritySchemes: openapi3.SecuritySchemes{},
			Headers: openapi3.Headers{
				"RetryAfter": &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
					Description: "seconds to wait before sending the same request again",
					Schema:      openapi3.NewIntegerSchema().WithMin(0).NewRef(),
				}}},
			},
		},
	}
	shared, err := sharedBodies(ops, doc.Components.Schemas)
	if err != nil {
		return nil, err
	}
	var n int
	for _, f := range c.Functions {
		for _, r := range f.Routes {
			op, ok := byKey[r.Key()]
			if !ok {
				return nil, fmt.Errorf("%s has no Operation", r.Key())
			}
			delete(byKey, r.Key())
			o, err := operation(r, op, shared)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.Key(), err)
			}
			path := openAPIPath(r.Path)
			item := doc.Paths.Value(path)
			if item == nil {
				item = &openapi3.PathItem{}
				doc.Paths.Set(path, item)
			}
			item.SetOperation(r.Method, o)
			scheme := schemeIAM
			if r.Auth == service.JWT {
				scheme = schemeJWT
			}
			doc.Components.SecuritySchemes[scheme] = securityScheme(scheme)
			n++
		}
	}
	for k := range byKey {
		return nil, fmt.Errorf("%s is not a route of the contract", k)
	}
	if n == 0 {
		return nil, fmt.Errorf("no routes")
	}
	return doc, nil
}

// openAPIPath is an API Gateway path as OpenAPI writes it: a greedy
// "{arn+}" is "{arn}".
func openAPIPath(p string) string { return strings.ReplaceAll(p, "+}", "}") }

func securityScheme(name string) *openapi3.SecuritySchemeRef {
	if name == schemeJWT {
		return &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
			Type: "http", Scheme: "bearer", BearerFormat: "JWT",
			Description: "a token of the stage's identity provider, checked by API Gateway's JWT authorizer (signature, issuer, audience, exp, nbf)",
		}}
	}
	s := &openapi3.SecurityScheme{
		Type: "apiKey", In: "header", Name: "Authorization",
		Description: "AWS Signature Version 4 (service execute-api) by a principal IAM allows execute-api:Invoke on the route (API Gateway's AWS_IAM authorization)",
	}
	s.Extensions = map[string]any{"x-amazon-apigateway-authtype": "awsSigv4"}
	return &openapi3.SecuritySchemeRef{Value: s}
}

func operation(r service.Route, op api.Operation, shared bodies) (*openapi3.Operation, error) {
	o := &openapi3.Operation{
		OperationID: r.Operation,
		Summary:     op.Summary,
		Responses:   openapi3.NewResponses(),
	}
	scheme := schemeIAM
	if r.Auth == service.JWT {
		scheme = schemeJWT
	}
	o.Security = &openapi3.SecurityRequirements{{scheme: []string{}}}
	for _, p := range r.Params() {
		s := openapi3.NewStringSchema().WithMinLength(1).WithMaxLength(ids.MaxKeyBytes)
		desc := fmt.Sprintf("a key: UTF-8, 1 to %d bytes, none of '#', '/', '*', '?', whitespace or control characters", ids.MaxKeyBytes)
		if slices.Contains(op.UUIDs, p) {
			s = openapi3.NewUUIDSchema()
			desc = "a canonical UUID"
		}
		if strings.Contains(r.Path, "{"+string(p)+"+}") {
			s = openapi3.NewStringSchema().WithMinLength(1)
			desc = "greedy: the rest of the path, slashes included"
		}
		o.AddParameter(&openapi3.Parameter{Name: string(p), In: openapi3.ParameterInPath, Required: true, Description: desc, Schema: s.NewRef()})
	}
	for name := range op.Query {
		if !slices.Contains(r.Query, name) {
			return nil, fmt.Errorf("bounds query parameter %q the route does not take", name)
		}
	}
	for _, q := range r.Query {
		p := op.Query[q]
		s := openapi3.NewStringSchema()
		if p.Integer {
			s = openapi3.NewIntegerSchema().WithMin(float64(p.Min)).WithMax(float64(p.Max))
			if p.Default != 0 {
				s.Default = p.Default
			}
		}
		if len(p.Enum) > 0 {
			for _, e := range p.Enum {
				s.Enum = append(s.Enum, e)
			}
		}
		s.Format = p.Format
		o.AddParameter(&openapi3.Parameter{Name: string(q), In: openapi3.ParameterInQuery, Required: p.Required, Description: p.Description, Schema: s.NewRef()})
	}
	if r.Idempotent {
		o.AddParameter(&openapi3.Parameter{Name: api.IdempotencyHeader, In: openapi3.ParameterInHeader,
			Description: fmt.Sprintf("makes a retry safe: the same key with the same request answers the first answer again (Idempotent-Replayed: true) for %s; with another request 422 %s; while the first still runs 409 %s with Retry-After",
				api.IdempotencyWindow, api.CodeKeyReused, api.CodeInProgress),
			Schema: openapi3.NewStringSchema().WithMinLength(1).WithMaxLength(api.MaxIdempotencyKeyLen).WithPattern(`^[!-~]+$`).NewRef()})
	}
	for _, name := range slices.Sorted(maps.Keys(op.Headers)) {
		o.AddParameter(&openapi3.Parameter{Name: name, In: openapi3.ParameterInHeader, Description: op.Headers[name], Schema: openapi3.NewStringSchema().NewRef()})
	}
	if op.IfMatch {
		o.AddParameter(&openapi3.Parameter{Name: "If-Match", In: openapi3.ParameterInHeader,
			Description: "the ETag of the version the write expects; a stale one is 409 conflict",
			Schema:      openapi3.NewStringSchema().NewRef()})
	}
	if op.Body != nil {
		s, err := shared.schema(op.Body, false)
		if err != nil {
			return nil, fmt.Errorf("request body: %w", err)
		}
		mt := openapi3.NewMediaType().WithSchemaRef(s)
		if op.Example != nil {
			mt.Example = op.Example
		}
		o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).
			WithContent(openapi3.Content{"application/json": mt})}
	}
	if len(op.Answers) == 0 {
		return nil, fmt.Errorf("no answers")
	}
	for _, a := range op.Answers {
		resp := openapi3.NewResponse().WithDescription(http.StatusText(a.Status))
		resp.Headers = openapi3.Headers{}
		if a.Body != nil {
			var s *openapi3.SchemaRef
			var err error
			if len(op.Secrets) > 0 {
				// This operation's answer requires less than the type's
				// (its secrets are left out of a replay): its own schema.
				s, err = schemaOf(a.Body, true)
				if err == nil {
					s.Value.Required = slices.DeleteFunc(s.Value.Required, func(f string) bool { return slices.Contains(op.Secrets, f) })
				}
			} else {
				s, err = shared.schema(a.Body, true)
			}
			if err != nil {
				return nil, fmt.Errorf("answer %d: %w", a.Status, err)
			}
			resp.WithContent(openapi3.Content{"application/json": openapi3.NewMediaType().WithSchemaRef(s)})
		}
		if a.Location {
			resp.Headers["Location"] = header("the created resource's path, relative to the API's root", openapi3.NewStringSchema())
		}
		if op.ETag {
			resp.Headers["ETag"] = header("the version of the resource, for If-Match", openapi3.NewStringSchema())
		}
		if r.Idempotent {
			resp.Headers["Idempotent-Replayed"] = header("true on an answer replayed for a repeated Idempotency-Key", openapi3.NewStringSchema().WithEnum("true"))
			resp.Headers[api.RedactedHeader] = header("on a replay, the fields of the first answer left out as secrets (shown once)", openapi3.NewStringSchema())
		}
		o.AddResponse(a.Status, resp)
	}
	errs := []int{http.StatusBadRequest}
	if len(r.Params()) > 0 {
		errs = append(errs, http.StatusNotFound)
	}
	if r.Method != http.MethodGet {
		errs = append(errs, http.StatusConflict)
	}
	if op.Body != nil {
		errs = append(errs, http.StatusRequestEntityTooLarge)
	}
	if r.Idempotent {
		errs = append(errs, http.StatusUnprocessableEntity)
	}
	for _, st := range errs {
		o.AddResponse(st, errorResponse(http.StatusText(st)))
	}
	unavailable := errorResponse("a dependency (DynamoDB) could not serve the request now: send the same request again after Retry-After seconds")
	unavailable.Headers = openapi3.Headers{"Retry-After": &openapi3.HeaderRef{Ref: "#/components/headers/RetryAfter"}}
	o.AddResponse(http.StatusServiceUnavailable, unavailable)
	o.Responses.Set("default", &openapi3.ResponseRef{Value: errorResponse("any other error, in the same shape")})
	if r.Idempotent {
		// A kept answer is replayed whatever its status (a 4xx too; a 5xx
		// released the key).
		for st, resp := range o.Responses.Map() {
			if strings.HasPrefix(st, "2") {
				continue
			}
			if resp.Value.Headers == nil {
				resp.Value.Headers = openapi3.Headers{}
			}
			resp.Value.Headers["Idempotent-Replayed"] = header("true on an answer replayed for a repeated Idempotency-Key", openapi3.NewStringSchema().WithEnum("true"))
		}
	}
	return o, nil
}

func header(desc string, s *openapi3.Schema) *openapi3.HeaderRef {
	return &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{Description: desc, Schema: s.NewRef()}}}
}

func errorResponse(desc string) *openapi3.Response {
	return openapi3.NewResponse().WithDescription(desc).WithContent(openapi3.Content{
		"application/json": openapi3.NewMediaType().WithSchemaRef(openapi3.NewSchemaRef("#/components/schemas/Error", nil)),
	})
}

// errorSchema is the platform's error body (api.WriteError).
func errorSchema() *openapi3.SchemaRef {
	field := openapi3.NewObjectSchema().
		WithProperty("field", openapi3.NewStringSchema()).
		WithProperty("message", openapi3.NewStringSchema())
	field.Required = []string{"field", "message"}
	codes := []any{api.CodeBadRequest, api.CodeValidation, api.CodeUnauthorized, api.CodeForbidden, api.CodeNotFound,
		api.CodeMethodNotAllowed, api.CodeConflict, api.CodeTooLarge, api.CodeInternal, api.CodeUnavailable,
		api.CodeKeyReused, api.CodeInProgress}
	e := openapi3.NewObjectSchema().
		WithProperty("code", &openapi3.Schema{Type: &openapi3.Types{"string"},
			Description: "stable: clients switch on it; a service may add its own (e.g. invalid_transition), listed on its doc page", Examples: codes}).
		WithProperty("message", openapi3.NewStringSchema()).
		WithPropertyRef("fields", openapi3.NewArraySchema().WithItems(field).WithMaxItems(api.MaxFieldErrors).NewRef())
	e.Required = []string{"code", "message"}
	body := openapi3.NewObjectSchema().
		WithProperty("error", e).
		WithProperty("request_id", openapi3.NewStringSchema())
	body.Required = []string{"error"}
	body.Description = fmt.Sprintf("every error: at most %d fields, names cut at %d characters, at most %d bytes", api.MaxFieldErrors, api.MaxEchoChars, api.MaxErrorBodyBytes)
	body.Examples = []any{map[string]any{
		"error":      map[string]any{"code": api.CodeValidation, "message": "caller_id: is required", "fields": []any{map[string]any{"field": "caller_id", "message": "is required"}}},
		"request_id": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
	}}
	return body.NewRef()
}

// bodies are the request and answer types two or more operations of a
// document share, each a named schema of components/schemas (by the Go
// type's name: Ticket; a request type's upper-cased, StatusRequest; an
// instance of a generic type its argument's and its own, ProjectPage), so
// a typed client has one type for them (itsm.Ticket) instead of one
// anonymous struct per operation. A type one operation uses stays inline:
// its name would be an implementation detail the document then promises.
type bodies map[bodyKey]*openapi3.SchemaRef

// bodyKey is a Go type as a request body or as an answer: the two schemas
// differ (an answer's fields are required, a request's refuse others).
type bodyKey struct {
	t      reflect.Type
	answer bool
}

// sharedBodies counts the body types of ops and writes the schema of each
// shared one into schemas. An answer of an operation with Secrets is its
// own (see operation) and not counted.
func sharedBodies(ops []api.Operation, schemas openapi3.Schemas) (bodies, error) {
	uses := map[bodyKey]int{}
	for _, op := range ops {
		seen := map[bodyKey]bool{}
		if op.Body != nil {
			seen[bodyKey{reflect.TypeOf(op.Body), false}] = true
		}
		for _, a := range op.Answers {
			if a.Body != nil && len(op.Secrets) == 0 {
				seen[bodyKey{reflect.TypeOf(a.Body), true}] = true
			}
		}
		for k := range seen {
			uses[k]++
		}
	}
	out := bodies{}
	owner := map[string]bodyKey{}
	for _, k := range slices.SortedFunc(maps.Keys(uses), func(a, b bodyKey) int { return strings.Compare(a.t.String(), b.t.String()) }) {
		if uses[k] < 2 || k.t.Kind() != reflect.Struct || k.t.Name() == "" {
			continue
		}
		name := schemaName(k.t)
		if other, dup := owner[name]; dup {
			return nil, fmt.Errorf("schema name %s of %v (answer %v) is also %v's (answer %v): rename one of the Go types", name, k.t, k.answer, other.t, other.answer)
		}
		if _, taken := schemas[name]; taken {
			return nil, fmt.Errorf("schema name %s of %v is taken by the platform's", name, k.t)
		}
		owner[name] = k
		s, err := schemaOf(reflect.New(k.t).Elem().Interface(), k.answer)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", k.t, err)
		}
		schemas[name] = s
		out[k] = openapi3.NewSchemaRef("#/components/schemas/"+name, s.Value)
	}
	return out, nil
}

// schema is v's schema as a request body (answer false) or an answer: a
// reference to its named schema when shared, else inline.
func (b bodies) schema(v any, answer bool) (*openapi3.SchemaRef, error) {
	if ref, ok := b[bodyKey{reflect.TypeOf(v), answer}]; ok {
		// A reference of its own: the caller may set its description.
		return openapi3.NewSchemaRef(ref.Ref, ref.Value), nil
	}
	return schemaOf(v, answer)
}

// schemaName is t's name as a schema: the Go name with its first letter
// upper-cased; Page[…Project] is ProjectPage.
func schemaName(t reflect.Type) string {
	name := t.Name()
	if base, arg, ok := strings.Cut(name, "["); ok {
		arg = strings.TrimSuffix(arg, "]")
		arg = arg[strings.LastIndexAny(arg, "./")+1:]
		name = arg + base
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

var (
	rawMessage = reflect.TypeFor[json.RawMessage]()
	timeType   = reflect.TypeFor[time.Time]()
	marshaler  = reflect.TypeFor[json.Marshaler]()
	docType    = reflect.TypeFor[ddb.Doc]()
)

// schemaOf is the schema of v's type, inline: an answer's fields without
// omitempty are required and a slice, map or pointer among them may be
// null (encoding/json writes nil so); a request's object refuses fields it
// does not name (api.DecodeJSON does) and requires none (each handler's
// validation says which it needs).
func schemaOf(v any, answer bool) (*openapi3.SchemaRef, error) {
	var custom openapi3gen.SchemaCustomizerFn
	custom = func(name string, t reflect.Type, tag reflect.StructTag, s *openapi3.Schema) error {
		if t.PkgPath() == reflect.TypeFor[api.Operation]().PkgPath() && strings.HasPrefix(t.Name(), "Optional[") {
			f, _ := t.FieldByName("V")
			inner, err := openapi3gen.NewGenerator(openapi3gen.SchemaCustomizer(custom)).GenerateSchemaRef(f.Type)
			if err != nil {
				return err
			}
			*s = *inner.Value
			// null decodes (Optional.Null): a route either clears the field
			// with it or refuses it with a 400 naming the field.
			s.Nullable = true
			return nil
		}
		if t == docType || t == rawMessage || (t != timeType && t.Implements(marshaler)) {
			*s = openapi3.Schema{Description: s.Description}
			return nil
		}
		jsonTag := tag.Get("json")
		omit := strings.Contains(jsonTag, ",omitempty") || strings.Contains(jsonTag, ",omitzero")
		if answer && !omit && name != "" && (t.Kind() == reflect.Slice || t.Kind() == reflect.Map) && t != rawMessage {
			s.Nullable = true
		}
		if t.Kind() == reflect.Struct && t != timeType {
			if answer {
				s.Required = requiredFields(t)
			} else if s.Type.Is("object") {
				s.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
			}
		}
		return nil
	}
	ref, err := openapi3gen.NewSchemaRefForValue(v, nil, openapi3gen.SchemaCustomizer(custom), openapi3gen.ThrowErrorOnCycle())
	if err != nil {
		return nil, err
	}
	to31(ref, map[*openapi3.Schema]bool{})
	return ref, nil
}

// requiredFields are the JSON names of t's fields that encoding/json
// always writes: those without omitempty, embedded structs' included.
func requiredFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				continue // may be nil: its fields may be absent
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, requiredFields(ft)...)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,") {
			continue
		}
		out = append(out, name)
	}
	return out
}

// to31 rewrites OpenAPI 3.0's nullable as JSON Schema's type list, which
// 3.1 uses instead.
func to31(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	ref.Ref = ""
	s := ref.Value
	seen[s] = true
	if s.Nullable {
		s.Nullable = false
		if s.Type != nil && len(*s.Type) > 0 {
			t := append(openapi3.Types{}, *s.Type...)
			t = append(t, "null")
			s.Type = &t
		}
	}
	if s.Type != nil && s.Type.Is("object") && s.Properties == nil {
		s.Properties = nil
	}
	to31(s.Items, seen)
	for _, p := range s.Properties {
		to31(p, seen)
	}
	if s.AdditionalProperties.Schema != nil {
		to31(s.AdditionalProperties.Schema, seen)
	}
}

// Marshal is doc as committed: indented JSON with a final newline, keys
// in a stable order.
func Marshal(doc *openapi3.T) ([]byte, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
