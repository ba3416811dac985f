package bodyschema

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"

	js "github.com/santhosh-tekuri/jsonschema/v6"
)

// Limits on what one schema may make a validation cost. A schema is a
// client's (Stak's inbox schemas are a tenant's), and every publish to its
// inbox is validated against it in the one API function all tenants share,
// so a schema is refused at compile time, with a 400 naming the limit,
// when:
//
//   - its subschemas, each $ref followed to its target (memoised, a
//     recursive $ref counted once), exceed MaxExpandedSchemas: 26 levels of
//     allOf: [{$ref: next}, {$ref: next}] is 2 KB of text and 2^26
//     evaluations of every value;
//   - they nest deeper than MaxSchemaDepth, $refs followed;
//   - a pattern (pattern, or a patternProperties name) is longer than
//     MaxPatternBytes or compiles to more than MaxPatternInsts RE2
//     instructions ([ab]{1000} is a few bytes and thousands of
//     instructions, and matching costs the input's length times them);
//   - an enum lists more than MaxEnumValues values.
//
// A value is then checked in at most about MaxExpandedSchemas times its
// size steps, whatever the schema, and Check refuses a value whose bound
// (its JSON values times the schema's expanded subschemas) exceeds
// MaxSteps before validating any of it: a 16 KB body of 8,000 numbers
// against the costliest accepted schema would be 8 million checks.
const (
	// MaxSteps bounds what one Check may cost: a value's JSON values
	// (objects, arrays and scalars, each counted once) times its schema's
	// Cost. Past it the value is a field error, never a slow validation.
	// About 50 ms at 0.23 µs a step (BenchmarkCostliestAcceptedCheck).
	MaxSteps           = 200_000
	MaxExpandedSchemas = 1000
	MaxSchemaDepth     = 32
	MaxPatternBytes    = 256
	MaxPatternInsts    = 1000
	MaxEnumValues      = 256
)

// dataKeywords hold values, not subschemas: their contents cost no
// schema evaluation.
var dataKeywords = map[string]bool{
	"enum": true, "const": true, "default": true, "examples": true,
	"title": true, "description": true, "$comment": true,
}

// costs walks a schema document with its $refs followed.
type costs struct {
	root    any
	anchors map[string]any
	memo    map[string]int
	active  map[string]bool
}

// checkCost refuses a schema past the limits above, and returns its
// expanded subschemas otherwise.
func checkCost(doc any) (int, error) {
	c := &costs{root: doc, anchors: map[string]any{}, memo: map[string]int{}, active: map[string]bool{}}
	collectAnchors(doc, c.anchors)
	n, err := c.cost(doc, "", 0)
	if err != nil {
		return 0, err
	}
	if n > MaxExpandedSchemas {
		return 0, &CompileError{Message: fmt.Sprintf("expands to more than %d subschemas with its $refs followed; a schema may make each value cost at most that many checks", MaxExpandedSchemas)}
	}
	return n, nil
}

// values counts the JSON values in v (v itself, and everything inside it),
// stopping once the count passes limit.
func values(v any, limit int) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if n > limit {
				break
			}
			n += values(e, limit-n)
		}
	case []any:
		for _, e := range v {
			if n > limit {
				break
			}
			n += values(e, limit-n)
		}
	}
	return n
}

// cost is the number of subschemas a value meets under node (at path,
// depth levels down), its $refs followed. It stops counting past the
// limit.
func (c *costs) cost(node any, path string, depth int) (int, error) {
	obj, ok := node.(map[string]any)
	if !ok {
		return 1, nil // true, false
	}
	if depth > MaxSchemaDepth {
		return 0, &CompileError{Path: path, Message: fmt.Sprintf("nests subschemas more than %d deep (with its $refs followed)", MaxSchemaDepth)}
	}
	if err := checkKeywords(obj, path); err != nil {
		return 0, err
	}
	n := 1
	for _, k := range []string{"$ref", "$dynamicRef"} {
		ref, ok := obj[k].(string)
		if !ok {
			continue
		}
		m, err := c.ref(ref, path+"/"+k, depth)
		if err != nil {
			return 0, err
		}
		n += m
	}
	for k, v := range obj {
		if dataKeywords[k] {
			continue
		}
		m, err := c.children(v, path+"/"+k, depth)
		if err != nil {
			return 0, err
		}
		if n += m; n > MaxExpandedSchemas {
			return n, nil
		}
	}
	return n, nil
}

// children costs the subschemas inside a keyword's value: a schema, an
// array of schemas, or an object of them (properties, $defs).
func (c *costs) children(v any, path string, depth int) (int, error) {
	switch v := v.(type) {
	case map[string]any:
		if looksLikeSchema(v) {
			return c.cost(v, path, depth+1)
		}
		n := 0
		for k, sub := range v {
			m, err := c.children(sub, path+"/"+k, depth)
			if err != nil {
				return 0, err
			}
			if n += m; n > MaxExpandedSchemas {
				return n, nil
			}
		}
		return n, nil
	case []any:
		n := 0
		for i, sub := range v {
			m, err := c.children(sub, path+"/"+strconv.Itoa(i), depth)
			if err != nil {
				return 0, err
			}
			if n += m; n > MaxExpandedSchemas {
				return n, nil
			}
		}
		return n, nil
	case bool:
		return 1, nil
	}
	return 0, nil
}

// ref costs a local $ref's target once (memoised); a target already being
// costed is a recursion, which the value's own depth bounds: counted once.
func (c *costs) ref(ref, path string, depth int) (int, error) {
	if n, ok := c.memo[ref]; ok {
		return n, nil
	}
	if c.active[ref] {
		return 1, nil
	}
	target, ok := c.resolve(ref)
	if !ok {
		return 1, nil // the library refuses what does not resolve
	}
	c.active[ref] = true
	n, err := c.cost(target, path, depth+1)
	delete(c.active, ref)
	if err != nil {
		return 0, err
	}
	c.memo[ref] = n
	return n, nil
}

// resolve finds a local reference: "#", a JSON pointer "#/…" or an
// anchor "#name". Other documents are never loaded (noLoads).
func (c *costs) resolve(ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	if frag == "" {
		return c.root, true
	}
	if !strings.HasPrefix(frag, "/") {
		a, ok := c.anchors[frag]
		return a, ok
	}
	node := c.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch n := node.(type) {
		case map[string]any:
			node, ok = n[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			ok = err == nil && i >= 0 && i < len(n)
			if ok {
				node = n[i]
			}
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	return node, true
}

// looksLikeSchema tells a subschema from an object of subschemas
// (properties, $defs, patternProperties): it has a keyword.
func looksLikeSchema(m map[string]any) bool {
	for _, k := range []string{"type", "$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "properties", "items", "enum", "const", "pattern", "if", "$defs", "required", "additionalProperties", "$anchor", "prefixItems", "contains"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return len(m) == 0
}

// checkKeywords applies the pattern and enum limits to one schema object.
func checkKeywords(obj map[string]any, path string) error {
	if p, ok := obj["pattern"].(string); ok {
		if err := checkPattern(p, path+"/pattern"); err != nil {
			return err
		}
	}
	if pp, ok := obj["patternProperties"].(map[string]any); ok {
		for p := range pp {
			if err := checkPattern(p, path+"/patternProperties"); err != nil {
				return err
			}
		}
	}
	if e, ok := obj["enum"].([]any); ok && len(e) > MaxEnumValues {
		return &CompileError{Path: path + "/enum", Message: fmt.Sprintf("lists %d values; at most %d", len(e), MaxEnumValues)}
	}
	return nil
}

func checkPattern(p, path string) error {
	if _, err := patternSize(p); err != nil {
		return &CompileError{Path: path, Message: err.Error()}
	}
	return nil
}

// patternSize is the number of RE2 instructions p compiles to, or an
// error when p is past MaxPatternBytes or MaxPatternInsts (0 and no
// error when p does not parse: regexp.Compile says why).
func patternSize(p string) (int, error) {
	if len(p) > MaxPatternBytes {
		return 0, fmt.Errorf("is %d bytes long; a pattern may be at most %d", len(p), MaxPatternBytes)
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return 0, nil
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, nil
	}
	if len(prog.Inst) > MaxPatternInsts {
		return 0, fmt.Errorf("compiles to %d regular-expression instructions; at most %d (write a shorter repetition: [ab]{1000} is 1000 of them)", len(prog.Inst), MaxPatternInsts)
	}
	return len(prog.Inst), nil
}

// pattern is a regular expression compiled by regexpEngine, with its
// size.
type pattern struct {
	*regexp.Regexp
	insts int
}

// regexpEngine compiles every regular expression the library compiles:
// a schema's patterns and patternProperties names, wherever they sit
// (checkCost reads the document's, but not under a property named title
// or enum, or in a subschema it does not tell from an object of
// subschemas), and the strings of a value that a "format": "regex"
// checks (asserted in draft-07 and older), which would otherwise compile
// whatever a client sends: 16 KB of [\pL\pN]{1000} is 0.7 s. Past
// MaxPatternBytes or MaxPatternInsts it refuses, before compiling.
func regexpEngine(s string) (js.Regexp, error) {
	n, err := patternSize(s)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, err
	}
	return &pattern{Regexp: re, insts: n}, nil
}

// collectAnchors maps every $anchor (and $dynamicAnchor) to its schema.
func collectAnchors(node any, into map[string]any) {
	switch n := node.(type) {
	case map[string]any:
		for _, k := range []string{"$anchor", "$dynamicAnchor"} {
			if a, ok := n[k].(string); ok {
				into[a] = n
			}
		}
		for k, v := range n {
			if !dataKeywords[k] {
				collectAnchors(v, into)
			}
		}
	case []any:
		for _, v := range n {
			collectAnchors(v, into)
		}
	}
}
