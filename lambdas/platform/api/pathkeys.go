package api

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dynastack/dynastack/constructs/service"
)

// Path keys: every path parameter of every route ({tenant}, {id}, …) is
// checked by the Router before its handler runs, once for every service.
// A key becomes part of a DynamoDB key and of IAM resource patterns
// (execute-api:Invoke, whose * and ? are wildcards and whose / separates
// the method from the path), and net/http has already percent-decoded it:
// a %FE that is not UTF-8 would be stored as U+FFFD and collapse two keys
// into one, %2F would split a segment and %23 a composite sort key. So a
// key must be:
//
//   - valid UTF-8;
//   - 1 to MaxPathKeyBytes bytes (MaxGreedyPathBytes for a greedy {x+}
//     parameter, e.g. Nucleus's {arn+});
//   - free of '#', '/', '*', '?', whitespace and control characters (a
//     greedy parameter may hold '/').
//
// Anything else is a 400 validation_failed naming the parameter, before
// any DynamoDB call. A service checks its own, narrower forms (a UUID, an
// account id) after this.
const (
	MaxPathKeyBytes    = 128
	MaxGreedyPathBytes = 1024
	// KeyForbidden are the characters no key may hold.
	KeyForbidden = "#/*?"
)

// CheckKey reports why s cannot be a key (a path parameter, or a key a
// body names that later appears in a path, such as a Stak user id), or ""
// when it can. Its length is bounded by max bytes.
func CheckKey(s string, max int) string { return checkKey(s, max, KeyForbidden) }

func checkKey(s string, max int, forbidden string) string {
	switch {
	case s == "":
		return "is required"
	case !utf8.ValidString(s):
		return "must be valid UTF-8 (percent-encode each byte of the UTF-8 encoding)"
	case len(s) > max:
		return fmt.Sprintf("must be at most %d bytes of UTF-8 (got %d)", max, len(s))
	case strings.ContainsAny(s, forbidden):
		return "must not contain " + quoteEach(forbidden)
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return "must not contain whitespace or control characters"
	}
	return ""
}

func quoteEach(chars string) string {
	q := make([]string, 0, len(chars))
	for _, c := range chars {
		q = append(q, "'"+string(c)+"'")
	}
	return strings.Join(q, ", ")
}

// pathParam is one {name} or greedy {name+} of a route's path.
type pathParam struct {
	name   service.PathParam
	greedy bool
}

// pathParams are the route's parameters; only the last can be greedy.
func pathParams(route service.Route) []pathParam {
	var out []pathParam
	for _, p := range route.Params() {
		out = append(out, pathParam{name: p})
	}
	if len(out) > 0 && strings.HasSuffix(route.Path, "+}") {
		out[len(out)-1].greedy = true
	}
	return out
}

// checkPath records on v every path parameter of r that is not a key.
func checkPath(v *Validator, r interface{ PathValue(string) string }, params []pathParam) {
	for _, p := range params {
		s := r.PathValue(string(p.name))
		var msg string
		if p.greedy {
			msg = checkKey(s, MaxGreedyPathBytes, strings.ReplaceAll(KeyForbidden, "/", ""))
		} else {
			msg = checkKey(s, MaxPathKeyBytes, KeyForbidden)
		}
		if msg != "" {
			v.Add(string(p.name), "path parameter %s", msg)
		}
	}
}
