package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// MaxNesting is how deep a request body may nest objects and arrays below
// its top-level object. A body's fields become an item's attributes, and
// DynamoDB's limit of 32 levels counts the item as the first: an attribute
// of 31 nested lists is stored, one of 32 is a ValidationException
// (measured against DynamoDB Local, which gives the service's message
// "Nesting Levels have exceeded supported limits").
const MaxNesting = ddb.MaxDocDepth - 1

// maxEchoChars bounds caller-chosen names (fields, keys, parameters) echoed
// in an error.
const maxEchoChars = 64

// checkBody refuses what encoding/json would accept but change on the way
// in, so that what a service stores is exactly what was sent: bytes that
// are not UTF-8 and escaped lone surrogates (both silently become U+FFFD),
// duplicate keys (the last silently wins), nesting DynamoDB cannot store,
// numbers DynamoDB cannot hold, and field names that differ from the
// struct's only in case (encoding/json folds case, so {"Title":…} would
// fill "title").
//
// It is one pass over the bytes (a scanner of its own, following dst's
// type alongside): no tokens, no tree, and a key costs an allocation only
// when it has escapes. Duplicates, depth and numbers are reported in the
// order of the text; a field name another case of is reported after them
// (the first in the text). At a syntax error it stops and reports nothing:
// the decode that follows reports it, with its offset.
func checkBody(body []byte, dst any) error {
	if !utf8.Valid(body) {
		return BadRequest("request body is not valid UTF-8")
	}
	if off := loneSurrogate(body); off >= 0 {
		return BadRequest("request body has an unpaired UTF-16 surrogate escape at byte %d; send the character itself or a valid surrogate pair", off)
	}
	sc := scanner{b: body, path: make([]step, 0, 8)}
	sc.skipSpace()
	err := sc.value(0, reflect.TypeOf(dst))
	switch {
	case errors.Is(err, errSyntax):
		return nil
	case err != nil:
		return err
	}
	return sc.fieldErr
}

// errSyntax stops the scan at the first syntax error.
var errSyntax = errors.New("syntax")

// scanner walks a JSON text.
type scanner struct {
	b   []byte
	pos int
	// path is where the scan is: the keys and indexes down to the value
	// being scanned, made a string only for an error.
	path []step
	// fieldErr is the first key that names no field of its struct.
	fieldErr error
}

// step is one step of a path: a key, or an index.
type step struct {
	isKey bool
	key   []byte // unescaped
	index int
}

// field is the path as an error names it: "a.b[2].c".
func (sc *scanner) field() string {
	var b strings.Builder
	for _, st := range sc.path {
		switch {
		case !st.isKey:
			b.WriteString("[" + strconv.Itoa(st.index) + "]")
		case b.Len() > 0:
			b.WriteString("." + string(st.key))
		default:
			b.Write(st.key)
		}
	}
	return b.String()
}

// top is the path's top-level field.
func (sc *scanner) top() string {
	if len(sc.path) == 0 {
		return ""
	}
	return string(sc.path[0].key)
}

func (sc *scanner) skipSpace() {
	for sc.pos < len(sc.b) {
		switch sc.b[sc.pos] {
		case ' ', '\t', '\n', '\r':
			sc.pos++
		default:
			return
		}
	}
}

// target is where the value at a path decodes: the struct whose keys
// are checked, or the element type of a map or slice; nil below an
// interface or a type that decodes itself.
func target(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	if c, ok := targetCache.Load(t); ok {
		r, _ := c.(reflect.Type)
		return r
	}
	c := findTarget(t)
	targetCache.Store(t, c)
	return c
}

// targetCache maps a type to its target (reflect.Type; a nil one for none).
var targetCache sync.Map

func findTarget(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) {
			return nil
		}
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // the type decodes itself
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		return t
	}
	return nil
}

// value scans one value at path, depth levels below the body, that
// decodes into t (nil: unchecked).
func (sc *scanner) value(depth int, t reflect.Type) error {
	if sc.pos >= len(sc.b) {
		return errSyntax
	}
	switch c := sc.b[sc.pos]; {
	case c == '{' || c == '[':
		if depth > MaxNesting {
			// Named by its top-level field, the path being 33 levels long.
			return Invalid(FieldError{Field: echo(sc.top()), Message: fmt.Sprintf("nests deeper than %d levels of objects and arrays (DynamoDB's limit of 32 counts the item)", MaxNesting)})
		}
		if c == '{' {
			return sc.object(depth, target(t))
		}
		return sc.array(depth, target(t))
	case c == '"':
		_, err := sc.str(false)
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		start := sc.pos
		if err := sc.number(); err != nil {
			return err
		}
		if n := string(sc.b[start:sc.pos]); !ddb.ValidNumber(n) {
			return Invalid(FieldError{Field: echo(sc.field()), Message: fmt.Sprintf("number %s is outside DynamoDB's range (38 significant digits, magnitude 1e-130 to below 1e126)", Truncate(n, 40))})
		}
		return nil
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	}
	return errSyntax
}

func (sc *scanner) literal(word string) error {
	if !bytes.HasPrefix(sc.b[sc.pos:], []byte(word)) {
		return errSyntax
	}
	sc.pos += len(word)
	return nil
}

// maxLinearKeys is how many keys of an object are compared one by one
// for duplicates before a set is cheaper.
const maxLinearKeys = 16

func (sc *scanner) object(depth int, t reflect.Type) error {
	sc.pos++ // {
	sc.skipSpace()
	if sc.pos < len(sc.b) && sc.b[sc.pos] == '}' {
		sc.pos++
		return nil
	}
	var (
		fields map[string]reflect.Type
		elem   reflect.Type
		inline [maxLinearKeys][]byte
		keys   = inline[:0]
		set    map[string]bool
	)
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = jsonFields(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	for {
		if sc.pos >= len(sc.b) || sc.b[sc.pos] != '"' {
			return errSyntax
		}
		k, err := sc.str(true)
		if err != nil {
			return err
		}
		sc.path = append(sc.path, step{isKey: true, key: k})
		if set != nil {
			if set[string(k)] {
				return Invalid(FieldError{Field: echo(sc.field()), Message: "is given twice; send each key once"})
			}
			set[string(k)] = true
		} else {
			for _, seen := range keys {
				if bytes.Equal(seen, k) {
					return Invalid(FieldError{Field: echo(sc.field()), Message: "is given twice; send each key once"})
				}
			}
			if keys = append(keys, k); len(keys) == maxLinearKeys {
				set = make(map[string]bool, 2*maxLinearKeys)
				for _, seen := range keys {
					set[string(seen)] = true
				}
			}
		}
		vt := elem
		if fields != nil {
			ft, ok := fields[string(k)]
			if !ok && sc.fieldErr == nil {
				sc.fieldErr = Invalid(FieldError{Field: echo(sc.field()), Message: "unknown field (names are case-sensitive)"})
			}
			vt = ft
		}
		sc.skipSpace()
		if sc.pos >= len(sc.b) || sc.b[sc.pos] != ':' {
			return errSyntax
		}
		sc.pos++
		sc.skipSpace()
		if err := sc.value(depth+1, vt); err != nil {
			return err
		}
		sc.path = sc.path[:len(sc.path)-1]
		if done, err := sc.separator('}'); err != nil || done {
			return err
		}
	}
}

// separator reads what follows a member or an element: a comma (more to
// come) or closer (the end).
func (sc *scanner) separator(closer byte) (done bool, err error) {
	sc.skipSpace()
	if sc.pos >= len(sc.b) {
		return false, errSyntax
	}
	switch sc.b[sc.pos] {
	case ',':
		sc.pos++
		sc.skipSpace()
		return false, nil
	case closer:
		sc.pos++
		return true, nil
	}
	return false, errSyntax
}

func (sc *scanner) array(depth int, t reflect.Type) error {
	sc.pos++ // [
	sc.skipSpace()
	if sc.pos < len(sc.b) && sc.b[sc.pos] == ']' {
		sc.pos++
		return nil
	}
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	for i := 0; ; i++ {
		sc.path = append(sc.path, step{index: i})
		if err := sc.value(depth+1, elem); err != nil {
			return err
		}
		sc.path = sc.path[:len(sc.path)-1]
		if done, err := sc.separator(']'); err != nil || done {
			return err
		}
	}
}

// str scans a string; for a key it returns its content, unescaped (a new
// slice only when it has escapes).
func (sc *scanner) str(key bool) ([]byte, error) {
	sc.pos++ // "
	start, escaped := sc.pos, false
	for sc.pos < len(sc.b) {
		switch c := sc.b[sc.pos]; {
		case c == '"':
			raw := sc.b[start:sc.pos]
			sc.pos++
			if !escaped || !key {
				return raw, nil
			}
			var s string
			if err := json.Unmarshal(sc.b[start-1:sc.pos], &s); err != nil {
				return nil, errSyntax
			}
			return []byte(s), nil
		case c == '\\':
			escaped = true
			if sc.pos+1 >= len(sc.b) {
				return nil, errSyntax
			}
			switch sc.b[sc.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				sc.pos += 2
			case 'u':
				if _, ok := hex4(sc.b, sc.pos+2); !ok {
					return nil, errSyntax
				}
				sc.pos += 6
			default:
				return nil, errSyntax
			}
		case c < 0x20:
			return nil, errSyntax
		default:
			sc.pos++
		}
	}
	return nil, errSyntax
}

// number scans a number by JSON's grammar.
func (sc *scanner) number() error {
	b, i := sc.b, sc.pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return errSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return errSyntax
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return errSyntax
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	sc.pos = i
	return nil
}

// echo shortens a caller-chosen name for an error message.
func echo(s string) string {
	if s == "" {
		return "body"
	}
	return Truncate(s, maxEchoChars)
}

// loneSurrogate returns the offset of the first \uD800–\uDFFF escape of a
// JSON text that is not a high surrogate followed by a low one, or -1.
func loneSurrogate(b []byte) int {
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(b) {
				return -1
			}
			if b[i+1] != 'u' {
				i++
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				return -1 // a syntax error, reported by the decoder
			}
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return i
			case r >= 0xD800 && r <= 0xDBFF:
				if i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					if lo, ok := hex4(b, i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 11
						continue
					}
				}
				return i
			}
			i += 5
		}
	}
	return -1
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(n), err == nil
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	fieldCache      sync.Map // reflect.Type → map[string]reflect.Type
)

// jsonFields maps the JSON names of t's fields (promoted ones included) to
// their types, as encoding/json names them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag, _ := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			continue // its fields are visible fields of t
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, seen := m[name]; !seen || len(f.Index) == 1 {
			m[name] = ft
		}
	}
	fieldCache.Store(t, m)
	return m
}
