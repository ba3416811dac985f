package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The token walk checkBody replaced (a tree of the body, then its keys
// against the struct), kept as the oracle FuzzCheckBody compares the
// one-pass scanner with: every check must still refuse what it refused.

// checkBody refuses what encoding/json would accept but change on the way
// in, so that what a service stores is exactly what was sent: bytes that
// are not UTF-8 and escaped lone surrogates (both silently become U+FFFD),
// duplicate keys (the last silently wins), nesting DynamoDB cannot store,
// numbers DynamoDB cannot hold, and field names that differ from the
// struct's only in case (encoding/json folds case, so {"Title":…} would
// fill "title").
func oldCheckBody(body []byte, dst any) error {
	if !utf8.Valid(body) {
		return BadRequest("request body is not valid UTF-8")
	}
	if off := loneSurrogate(body); off >= 0 {
		return BadRequest("request body has an unpaired UTF-16 surrogate escape at byte %d; send the character itself or a valid surrogate pair", off)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := oldWalk(dec, "", "", 0)
	if errors.Is(err, errOldSyntax) {
		return nil // the decode that follows reports it, with its offset
	}
	if err != nil {
		return err
	}
	return oldCheckFields(v, reflect.TypeOf(dst), "")
}

// node is a decoded JSON value: an object keeps its keys' values; nil for
// scalars.
type oldNode struct {
	object map[string]*oldNode
	array  []*oldNode
}

// errOldSyntax stops the walk at the first syntax error.
var errOldSyntax = errors.New("old syntax")

// top is the path's top-level field. (The walk as it shipped cut its
// path at the first "." or "[" to find it, which names the wrong field, or
// none, when a top-level key holds either character; the scanner names the
// key itself, and the oracle keeps that one correction.)
func oldWalk(dec *json.Decoder, path, top string, depth int) (*oldNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, errOldSyntax
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth > MaxNesting {
			// Named by its top-level field, the path being 33 levels long.
			return nil, Invalid(FieldError{Field: echo(top), Message: fmt.Sprintf("nests deeper than %d levels of objects and arrays (DynamoDB's limit of 32 counts the item)", MaxNesting)})
		}
		n := &oldNode{}
		if t == '[' {
			for i := 0; dec.More(); i++ {
				e, err := oldWalk(dec, path+"["+strconv.Itoa(i)+"]", top, depth+1)
				if err != nil {
					return nil, err
				}
				n.array = append(n.array, e)
			}
		} else {
			n.object = map[string]*oldNode{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, errOldSyntax
				}
				k, _ := kt.(string)
				field := k
				if path != "" {
					field = path + "." + k
				}
				if _, dup := n.object[k]; dup {
					return nil, Invalid(FieldError{Field: echo(field), Message: "is given twice; send each key once"})
				}
				memberTop := top
				if path == "" {
					memberTop = k
				}
				e, err := oldWalk(dec, field, memberTop, depth+1)
				if err != nil {
					return nil, err
				}
				n.object[k] = e
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, errOldSyntax
		}
		return n, nil
	case json.Number:
		if !ddb.ValidNumber(string(t)) {
			return nil, Invalid(FieldError{Field: echo(path), Message: fmt.Sprintf("number %s is outside DynamoDB's range (38 significant digits, magnitude 1e-130 to below 1e126)", Truncate(string(t), 40))})
		}
	}
	return nil, nil
}

// checkFields compares the keys of every object that decodes into a struct
// with the struct's JSON names, exactly.
func oldCheckFields(n *oldNode, t reflect.Type, path string) error {
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
			if err := oldCheckFields(e, ft, field); err != nil {
				return err
			}
		}
	case reflect.Map:
		for k, e := range n.object {
			if err := oldCheckFields(e, t.Elem(), path+"."+k); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i, e := range n.array {
			if err := oldCheckFields(e, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	}
	return nil
}

type fuzzBody struct {
	Name   string            `json:"name"`
	Count  int               `json:"count"`
	Tags   []string          `json:"tags"`
	Doc    any               `json:"doc"`
	Labels map[string]string `json:"labels"`
	Items  []struct {
		ID  string `json:"id"`
		Sub *struct {
			OK bool `json:"ok"`
		} `json:"sub"`
	} `json:"items"`
	Raw json.RawMessage `json:"raw"`
}

// FuzzCheckBody: the scanner refuses exactly what the token walk refused,
// with the same message (when a body has several keys of another case,
// the walk named one at random: then both name such a key).
func FuzzCheckBody(f *testing.F) {
	for _, seed := range []string{
		`{"name":"a","count":1,"tags":["x"],"doc":{"a":[1,2,{"b":null}]}}`, `{}`, `{"name":"a","name":"b"}`,
		`{"nam\u0065":"a","name":"b"}`, `{"Name":"a"}`, `{"items":[{"id":"x","sub":{"OK":true}}]}`, `{"count":1e400}`,
		`{"doc":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, `{"labels":{"a":"1","a":"2"}}`, `{"name":"a"`, `{"raw":{"X":1}}`,
		`{"doc":{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":0}}`,
		`{"doc":[1,-0.5e+3,01]}`, `{"name":"\ud83d\ude00"}`, `{"a":tru}`, "{\"name\":\"a\tb\"}", `{"items":[{"Id":1},{"sub":{"ok":1e999}}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var dst fuzzBody
		got, want := checkBody([]byte(in), &dst), oldCheckBody([]byte(in), &dst)
		require.Equal(t, want == nil, got == nil, "checkBody(%q) = %v; the token walk: %v", in, got, want)
		if got == nil {
			return
		}
		if strings.Contains(got.Error(), "unknown field") && strings.Contains(want.Error(), "unknown field") {
			return
		}
		require.Equal(t, want.Error(), got.Error(), "checkBody(%q) against the token walk", in)
	})
}

// TestCheckBodyManyKeys: past 16 keys an object's duplicates are found
// through a set, and still named with their path.
func TestCheckBodyManyKeys(t *testing.T) {
	var keys []string
	for i := range 40 {
		keys = append(keys, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	var dst fuzzBody
	require.NoError(t, checkBody([]byte(`{"doc":{`+strings.Join(keys, ",")+`}}`), &dst), "40 distinct keys")
	for _, dup := range []int{1, 20, 39} {
		body := `{"doc":{` + strings.Join(append(keys, fmt.Sprintf(`"k%d":0`, dup)), ",") + `}}`
		want := fmt.Sprintf("doc.k%d: is given twice", dup)
		assert.ErrorContains(t, checkBody([]byte(body), &dst), want, "key %d twice", dup)
	}
}
