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

	"github.com/dynastack/dynastack/lambdas/platform/jsondoc"
)

// MaxNesting is how deep a request body may nest objects and arrays below
// its top-level object. A body's fields become an item's attributes, and
// DynamoDB's limit of 32 levels counts the item as the first: an attribute
// of 31 nested lists is stored, one of 32 is a ValidationException
// (measured against DynamoDB Local, which gives the service's message
// "Nesting Levels have exceeded supported limits").
const MaxNesting = jsondoc.MaxDepth - 1

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
func checkBody(body []byte, dst any) error {
	if !utf8.Valid(body) {
		return BadRequest("request body is not valid UTF-8")
	}
	if off := loneSurrogate(body); off >= 0 {
		return BadRequest("request body has an unpaired UTF-16 surrogate escape at byte %d; send the character itself or a valid surrogate pair", off)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := walk(dec, "", 0)
	if errors.Is(err, errSyntax) {
		return nil // the decode that follows reports it, with its offset
	}
	if err != nil {
		return err
	}
	return checkFields(v, reflect.TypeOf(dst), "")
}

// node is a decoded JSON value: an object keeps its keys' values; nil for
// scalars.
type node struct {
	object map[string]*node
	array  []*node
}

// errSyntax stops the walk at the first syntax error.
var errSyntax = errors.New("syntax")

func walk(dec *json.Decoder, path string, depth int) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, errSyntax
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth > MaxNesting {
			// Named by its top-level field, the path being 33 levels long.
			top, _, _ := strings.Cut(path, ".")
			top, _, _ = strings.Cut(top, "[")
			return nil, Invalid(FieldError{Field: echo(top), Message: fmt.Sprintf("nests deeper than %d levels of objects and arrays (DynamoDB's limit of 32 counts the item)", MaxNesting)})
		}
		n := &node{}
		if t == '[' {
			for i := 0; dec.More(); i++ {
				e, err := walk(dec, path+"["+strconv.Itoa(i)+"]", depth+1)
				if err != nil {
					return nil, err
				}
				n.array = append(n.array, e)
			}
		} else {
			n.object = map[string]*node{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, errSyntax
				}
				k, _ := kt.(string)
				field := k
				if path != "" {
					field = path + "." + k
				}
				if _, dup := n.object[k]; dup {
					return nil, Invalid(FieldError{Field: echo(field), Message: "is given twice; send each key once"})
				}
				e, err := walk(dec, field, depth+1)
				if err != nil {
					return nil, err
				}
				n.object[k] = e
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, errSyntax
		}
		return n, nil
	case json.Number:
		if !jsondoc.ValidNumber(string(t)) {
			return nil, Invalid(FieldError{Field: echo(path), Message: fmt.Sprintf("number %s is outside DynamoDB's range (38 significant digits, magnitude 1e-130 to below 1e126)", Truncate(string(t), 40))})
		}
	}
	return nil, nil
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

// checkFields compares the keys of every object that decodes into a struct
// with the struct's JSON names, exactly.
func checkFields(n *node, t reflect.Type, path string) error {
	if n == nil || t == nil {
		return nil
	}
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
	case reflect.Struct:
		if n.object == nil {
			return nil // a type error, reported by the decoder
		}
		fields := jsonFields(t)
		for k, e := range n.object {
			field := k
			if path != "" {
				field = path + "." + k
			}
			ft, ok := fields[k]
			if !ok {
				return Invalid(FieldError{Field: echo(field), Message: "unknown field (names are case-sensitive)"})
			}
			if err := checkFields(e, ft, field); err != nil {
				return err
			}
		}
	case reflect.Map:
		for k, e := range n.object {
			if err := checkFields(e, t.Elem(), path+"."+k); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i, e := range n.array {
			if err := checkFields(e, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	}
	return nil
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
		tag := f.Tag.Get("json")
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
