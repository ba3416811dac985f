package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// BadPathKeys are path segments (as sent, percent-encoded) that no path
// parameter takes (ids.CheckKey): each must be a 400 naming the parameter.
var BadPathKeys = map[string]string{
	"invalid UTF-8":       "%FEx",
	"'#'":                 "a%23b",
	"'/'":                 "a%2Fb",
	"'*'":                 "a*",
	"'?'":                 "a%3Fb",
	"a control character": "a%00b",
	"whitespace":          "a%20b",
	"129 bytes":           strings.Repeat("k", 129),
}

// BadGreedyPathKeys are those of a greedy parameter ({arn+}), which may
// hold '/' and up to 1,024 bytes.
var BadGreedyPathKeys = map[string]string{
	"invalid UTF-8":       "%FEx",
	"'#'":                 "a%23b",
	"'*'":                 "a*",
	"'?'":                 "a%3Fb",
	"a control character": "a%00b",
	"whitespace":          "a%20b",
	"1,025 bytes":         strings.Repeat("k", 1025),
}

// Write is one write route of a service for Hostile.
type Write struct {
	Method, Path string
	// Body is a valid request body: a JSON object.
	Body string
	// Doc names a top-level field of Body that takes a free-form JSON
	// document, "" when the route has none.
	Doc string
}

// Hostile sends each route the inputs a hostile or careless client sends
// and fails unless every one is answered 4xx and state, a digest of what the
// service stores, is unchanged. Every route pattern of routes (the
// service's router) gets an unknown query parameter and 10,000 of them
// (one 400 naming "query", api.MaxQueryParams), and each of its path
// parameters each of BadPathKeys (a 400 naming the parameter); every write
// gets bytes that are not UTF-8, an unpaired surrogate escape, a duplicate key,
// a field name in another case, an unknown query parameter and a huge
// unknown field name (whose echo must stay short); and a free-form field,
// nesting deeper than DynamoDB's 32 levels and numbers DynamoDB cannot hold.
func Hostile(t *testing.T, h http.Handler, routes []string, state func(testing.TB) string, writes ...Write) {
	t.Helper()
	type input struct {
		name, method, path, body string
		// field is the path parameter a 400 must name, "" for any 4xx.
		field string
	}
	var inputs []input
	param := regexp.MustCompile(`\{[^}]+\}`)
	var many strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&many, "&x_unknown_%d=1", i)
	}
	for _, p := range routes {
		method, path, _ := strings.Cut(p, " ")
		sample := param.ReplaceAllString(path, "x")
		inputs = append(inputs,
			input{name: "unknown query parameter " + p, method: method, path: sample + "?x_unknown=1"},
			input{name: "10,000 query parameters " + p, method: method, path: sample + "?a=1" + many.String()},
		)
		// Every path parameter, in turn, gets each key the platform
		// refuses (ids.CheckKey), the others a valid one: a 400 naming it.
		for _, name := range param.FindAllString(path, -1) {
			field := strings.TrimSuffix(strings.TrimSuffix(strings.Trim(name, "{}"), "..."), "+")
			bads := BadPathKeys
			if strings.HasSuffix(name, "...}") {
				bads = BadGreedyPathKeys
			}
			for what, bad := range bads {
				at := strings.Replace(path, name, bad, 1)
				inputs = append(inputs, input{name: p + " " + field + ": " + what, method: method, path: param.ReplaceAllString(at, "x"), field: field})
			}
		}
	}
	for _, w := range writes {
		keys, values := fields(t, w.Body)
		at := func(s string) string { return w.Method + " " + w.Path + ": " + s }
		// The text cases go into the first string field (or, in a body
		// without one, the first field).
		str := 0
		for i, v := range values {
			if strings.HasPrefix(string(v), `"`) {
				str = i
				break
			}
		}
		upper := []rune(keys[0])
		upper[0] = unicode.ToUpper(upper[0])
		if string(upper) == keys[0] {
			upper[0] = unicode.ToLower(upper[0])
		}
		with := func(k []string, v []json.RawMessage) string { return object(k, v) }
		inputs = append(inputs,
			input{name: at("invalid UTF-8"), method: w.Method, path: w.Path, body: with(keys, replace(values, str, json.RawMessage("\"a\xffb\"")))},
			input{name: at("lone high surrogate"), method: w.Method, path: w.Path, body: with(keys, replace(values, str, json.RawMessage(`"a\ud800b"`)))},
			input{name: at("lone low surrogate"), method: w.Method, path: w.Path, body: with(keys, replace(values, str, json.RawMessage(`"\udc00"`)))},
			input{name: at("duplicate key"), method: w.Method, path: w.Path, body: with(append([]string{keys[0]}, keys...), append([]json.RawMessage{values[0]}, values...))},
			input{name: at("field name in another case"), method: w.Method, path: w.Path, body: with(append([]string{string(upper)}, keys[1:]...), values)},
			input{name: at("unknown query parameter"), method: w.Method, path: w.Path + "?x_unknown=1", body: w.Body},
			input{name: at("huge unknown field name"), method: w.Method, path: w.Path, body: with(append([]string{strings.Repeat("k", 5000)}, keys...), append([]json.RawMessage{json.RawMessage("1")}, values...))},
		)
		if w.Doc != "" {
			i := indexOf(t, keys, w.Doc)
			deep := strings.Repeat(`{"a":`, 33) + "1" + strings.Repeat("}", 33)
			for name, doc := range map[string]string{
				"33 levels":          deep,
				"32 levels":          strings.Repeat("[", 32) + strings.Repeat("]", 32),
				"1e400":              `{"n":1e400}`,
				"39 digits":          `{"n":123456789012345678901234567890123456789}`,
				"1e-131":             `{"n":1e-131}`,
				"33 levels of lists": strings.Repeat("[", 33) + strings.Repeat("]", 33),
			} {
				inputs = append(inputs, input{name: at(w.Doc + " " + name), method: w.Method, path: w.Path, body: with(keys, replace(values, i, json.RawMessage(doc)))})
			}
		}
	}
	before := state(t)
	for _, in := range inputs {
		r := Do(t, h, in.method, in.path, in.body)
		if !assert.True(t, r.Status >= 400 && r.Status <= 499, "%s: %d %.300s, want 4xx", in.name, r.Status, r.Body) {
			continue
		}
		if in.field != "" {
			var e ErrorBody
			_ = json.Unmarshal(r.Body, &e)
			assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %.300s, want 400 naming path parameter %s", in.name, r.Body, in.field)
			if assert.NotEmpty(t, e.Error.Fields, "%s: %.300s, want 400 naming path parameter %s", in.name, r.Body, in.field) {
				assert.Equal(t, in.field, e.Error.Fields[0].Field, "%s: path parameter the 400 names", in.name)
			}
		}
		assert.LessOrEqual(t, len(r.Body), 2048, "%s: error size; echoed input is not truncated", in.name)
		assert.True(t, utf8.Valid(r.Body), "%s: the answer is not UTF-8", in.name)
	}
	assert.Equal(t, before, state(t), "refused requests changed the stored state")
}

// fields splits a JSON object into its keys and values, in order.
func fields(t *testing.T, body string) ([]string, []json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	tok, err := dec.Token()
	require.NoError(t, err, "body %s is not a JSON object", body)
	require.Equal(t, json.Delim('{'), tok, "body %s is not a JSON object", body)
	var (
		keys   []string
		values []json.RawMessage
	)
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
		keys, values = append(keys, k.(string)), append(values, v)
	}
	require.NotEmpty(t, keys, "body %s has no field", body)
	return keys, values
}

func object(keys []string, values []json.RawMessage) string {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(values[i])
	}
	b.WriteByte('}')
	return b.String()
}

func replace(values []json.RawMessage, i int, v json.RawMessage) []json.RawMessage {
	out := append([]json.RawMessage(nil), values...)
	out[i] = v
	return out
}

func indexOf(t *testing.T, keys []string, k string) int {
	t.Helper()
	require.Contains(t, keys, k, "fields")
	return slices.Index(keys, k)
}
