package ids

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Path keys: every path parameter of every route ({tenant}, {id}, …) is
// checked by the HTTP router before its handler runs, once for every service;
// a key a queue message or a body carries is checked by the same rule.
// A key becomes part of a DynamoDB key and of IAM resource patterns
// (execute-api:Invoke, whose * and ? are wildcards and whose / separates
// the method from the path), and net/http has already percent-decoded it:
// a %FE that is not UTF-8 would be stored as U+FFFD and collapse two keys
// into one, %2F would split a segment and %23 a composite sort key. So a
// key must be:
//
//   - valid UTF-8;
//   - 1 to MaxKeyBytes bytes (MaxGreedyKeyBytes for a greedy {x+}
//     parameter, e.g. Nucleus's {arn+});
//   - free of '#', '/', '*', '?', whitespace and control characters (a
//     greedy parameter may hold '/').
//
// Anything else is a 400 validation_failed naming the parameter, before
// any DynamoDB call. A service checks its own, narrower forms (a UUID, an
// account id) after this.
const (
	MaxKeyBytes       = 128
	MaxGreedyKeyBytes = 1024
	// KeyForbidden are the characters no key may hold.
	KeyForbidden = "#/*?"
)

// CheckKey reports why s cannot be a key (a path parameter, or a key a
// body names that later appears in a path, such as a Stak user id), or ""
// when it can. Its length is bounded by max bytes.
func CheckKey(s string, max int) string { return checkKey(s, max, KeyForbidden) }

// CheckGreedyKey is CheckKey for a greedy path parameter ({arn+}), which
// may hold '/' and is bounded by MaxGreedyKeyBytes.
func CheckGreedyKey(s string) string {
	return checkKey(s, MaxGreedyKeyBytes, strings.ReplaceAll(KeyForbidden, "/", ""))
}

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

// ValidID reports whether a caller-chosen id (request or correlation id) is
// safe to log: printable ASCII, at most 128 bytes, so it cannot inject into
// logs.
func ValidID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// CanonicalUUID reports whether s is a UUID in canonical form (lower case,
// hyphenated), the only form the services generate: any other spelling of
// the same UUID would name an item that does not exist.
func CanonicalUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && len(s) == 36 && u.String() == s
}
