// Package bodyschema compiles JSON Schemas that clients send (or that the
// repository keeps) and validates request values against them, answering
// a refusal as field errors that name the JSON path of each bad value
// (`message.body.items[2].qty: got string, want number`).
//
// It wraps github.com/santhosh-tekuri/jsonschema/v6 (lambdas/go.mod
// replaces it with third_party/jsonschema, upstream's v6.0.3 with the
// drafts' metaschemas compiled by the first Compile instead of at init:
// 4–6 ms of every start of the functions that link it) and closes what a
// schema from a client must not do: a $ref to any document other than the
// schema itself is refused at compile time (no file or network loads from
// a Lambda function), and a schema without $schema is draft 2020-12, so
// what it means does not change with a library upgrade.
package bodyschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	js "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// location names the schema while it compiles; it never leaves the process.
const location = "urn:dynastack:schema"

// Schema is a compiled schema, safe for concurrent use.
type Schema struct {
	s    *js.Schema
	cost int
	g    *graph
}

// Cost is how many subschemas a value meets at most under the schema, its
// $refs followed (at most MaxExpandedSchemas): what each of a value's JSON
// values may cost to check.
func (s *Schema) Cost() int { return s.cost }

// CompileError says why a schema was refused, with the JSON path inside
// the schema where the path is known.
type CompileError struct {
	// Path is the location inside the schema ("" for the whole schema).
	Path    string
	Message string
}

func (e *CompileError) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

var printer = message.NewPrinter(language.English)

// An Option changes how Compile compiles.
type Option func(*options)

type options struct{ formats bool }

// AssertFormats makes "format" a check ("date-time", "email", …) instead
// of an annotation: right for the repository's own schemas, whose formats
// the code relies on. A client's schema keeps the standard's default.
func AssertFormats() Option { return func(o *options) { o.formats = true } }

// noLoads refuses every document but the schema itself and the
// metaschemas the library embeds.
type noLoads struct{}

func (noLoads) Load(url string) (any, error) {
	return nil, fmt.Errorf("a schema may refer only to itself (#… or its $defs); %q is not loaded", url)
}

// Compile parses and compiles raw, a JSON Schema. Numbers keep their
// digits (json.Number), and a schema that is not valid against its
// metaschema, refers outside itself or has a pattern Go's regexp cannot
// compile is a *CompileError.
func Compile(raw []byte, opts ...Option) (*Schema, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	doc, err := js.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &CompileError{Message: "is not JSON: " + err.Error()}
	}
	switch doc.(type) {
	case map[string]any, bool:
	default:
		return nil, &CompileError{Message: "must be a JSON object (or true/false)"}
	}
	if err := checkCounts(doc, ""); err != nil {
		return nil, err
	}
	cost, err := checkCost(doc)
	if err != nil {
		return nil, err
	}
	c := js.NewCompiler()
	c.DefaultDraft(js.Draft2020)
	c.UseLoader(noLoads{})
	c.UseRegexpEngine(regexpEngine)
	if o.formats {
		c.AssertFormat()
	}
	if err := c.AddResource(location, doc); err != nil {
		return nil, &CompileError{Message: err.Error()}
	}
	s, err := c.Compile(location)
	if err != nil {
		return nil, compileError(doc, err)
	}
	g := newGraph(s)
	compiled, err := g.expanded(s, doc)
	if err != nil {
		return nil, err
	}
	return &Schema{s: s, cost: max(cost, compiled), g: g}, nil
}

// countKeywords take a non-negative integer that the library converts to
// an int: 12345678901234567890 would wrap to a negative limit (seen with
// v6.0.3: maxLength refused every string). They are refused above
// MaxCount instead.
var countKeywords = map[string]bool{
	"maxLength": true, "minLength": true, "maxItems": true, "minItems": true,
	"maxProperties": true, "minProperties": true, "maxContains": true, "minContains": true,
}

// MaxCount bounds the count keywords (maxLength and the like).
const MaxCount = 1<<31 - 1

func checkCounts(doc any, path string) error {
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			p := Path(path, doc, []string{k})
			if n, ok := v.(json.Number); ok && countKeywords[k] {
				if f, err := strconv.ParseFloat(n.String(), 64); err != nil || f > MaxCount {
					return &CompileError{Path: p, Message: fmt.Sprintf("must be at most %d", MaxCount)}
				}
				continue
			}
			if err := checkCounts(v, p); err != nil {
				return err
			}
		}
	case []any:
		for i, v := range d {
			if err := checkCounts(v, Path(path, doc, []string{strconv.Itoa(i)})); err != nil {
				return err
			}
		}
	}
	return nil
}

// compileError turns the library's error into a path and a message
// without the internal location name.
func compileError(doc any, err error) error {
	var meta *js.SchemaValidationError
	if errors.As(err, &meta) {
		var verr *js.ValidationError
		if errors.As(meta.Err, &verr) {
			if leaves := leafErrors(verr); len(leaves) > 0 {
				l := leaves[0]
				return &CompileError{Path: Path("", doc, l.InstanceLocation), Message: "is not a valid JSON Schema: " + l.ErrorKind.LocalizedString(printer)}
			}
		}
	}
	var load *js.LoadURLError
	if errors.As(err, &load) && load.Err != nil {
		return &CompileError{Message: load.Err.Error()}
	}
	msg := strings.ReplaceAll(err.Error(), location, "the schema")
	return &CompileError{Message: "is not a valid JSON Schema: " + msg}
}

// Check validates value and adds one field error per violation, each named
// field + the JSON path of the offending value; the validator lists the
// first api.MaxFieldErrors and counts the rest.
// value is what encoding/json decodes into an any (numbers as json.Number
// or float64).
//
// A value whose JSON values times the schema's Cost exceed MaxSteps, or
// whose evaluations (the schema walked over the value, steps.go) would,
// is refused unchecked, with a field error that says so: no value makes
// a check cost more than MaxSteps steps.
func (s *Schema) Check(v *api.Validator, field string, value any) {
	if n := values(value, MaxSteps/max(s.cost, 1)); n*max(s.cost, 1) > MaxSteps {
		v.Add(field, "is too costly to check against its schema: more than %d JSON values, each meeting up to %d of its subschemas, is over the %d-step limit; send fewer values or a simpler schema", MaxSteps/max(s.cost, 1), s.cost, MaxSteps)
		return
	}
	if !s.g.evaluations(s.s, value, MaxSteps) {
		v.Add(field, "is too costly to check against its schema: over the %d-step limit, its values meeting its subschemas more often than that ($refs followed, every branch counted: a $ref that leads back twice per level doubles them at each level of nesting); send a smaller or shallower value, or a simpler schema", MaxSteps)
		return
	}
	err := s.s.Validate(value)
	if err == nil {
		return
	}
	var verr *js.ValidationError
	if !errors.As(err, &verr) {
		v.Add(field, "could not be validated: %s", err)
		return
	}
	seen := map[string]bool{}
	for _, l := range leafErrors(verr) {
		path := Path(field, value, l.InstanceLocation)
		msg := l.ErrorKind.LocalizedString(printer)
		if f, ok := l.ErrorKind.(*kind.Format); ok {
			// The library quotes the whole string first: past the field
			// message's 200 characters the reason would be cut off.
			if got, ok := f.Got.(string); ok && len(got) > maxFormatEcho {
				msg = fmt.Sprintf("a string of %d bytes is not valid %s: %v", len(got), f.Want, f.Err)
			}
		}
		if seen[path+msg] {
			continue
		}
		seen[path+msg] = true
		v.Add(path, "%s", msg)
	}
}

// maxFormatEcho is the longest string a format error quotes.
const maxFormatEcho = 64

// leafErrors are the violations themselves: the errors without causes.
func leafErrors(e *js.ValidationError) []*js.ValidationError {
	if len(e.Causes) == 0 {
		return []*js.ValidationError{e}
	}
	var out []*js.ValidationError
	for _, c := range e.Causes {
		out = append(out, leafErrors(c)...)
	}
	return out
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// Path writes tokens (a JSON pointer's parts) as a JSON path under root:
// array indexes in brackets, plain keys after a dot, other keys quoted in
// brackets. value is walked to tell an index from a key that looks like
// one.
func Path(root string, value any, tokens []string) string {
	var b strings.Builder
	b.WriteString(root)
	cur := value
	for _, t := range tokens {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + t + "]")
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
			continue
		case map[string]any:
			cur = c[t]
		default:
			cur = nil
		}
		if identifier.MatchString(t) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(t)
		} else {
			q, _ := json.Marshal(t)
			b.WriteString("[" + string(q) + "]")
		}
	}
	return b.String()
}

// Cache keeps compiled schemas by their text, so a hot path (every
// publish of an inbox) compiles each schema once per execution
// environment. It holds at most Max schemas and starts over when full.
type Cache struct {
	Max int
	mu  sync.Mutex
	m   map[string]*Schema
}

// Get returns the compiled raw, compiling it on first use.
func (c *Cache) Get(raw string) (*Schema, error) {
	c.mu.Lock()
	s, ok := c.m[raw]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := Compile([]byte(raw))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= max(c.Max, 1) {
		c.m = map[string]*Schema{}
	}
	c.m[raw] = s
	return s, nil
}
