// Pagination cursors: opaque base64url tokens that
// carry a DynamoDB position (a LastEvaluatedKey) and are bound to the query
// that produced them.
//
// A cursor is signed with HMAC-SHA256 over a scope string naming the query,
// e.g. "itsm/tickets-by-caller/poc-user-001". A cursor made for one caller
// therefore fails to decode for another, so a client cannot page into a
// partition it did not query by editing or swapping cursors; any change to a
// token is ErrInvalid, which services answer with 400.
//
// Keys are plain Go structs with json tags (for the token) and dynamodbav
// tags (for ExclusiveStartKey), so the conversion to attribute values is
// done by attributevalue and never by hand.

package ddb

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrInvalidCursor is returned for any token that is malformed, tampered with,
// or made for another scope.
var ErrInvalidCursor = errors.New("cursor: invalid cursor")

// MaxCursorLen bounds the tokens Decode accepts, before any work is done.
const MaxCursorLen = 2048

const (
	version = 1
	macLen  = 16 // truncated HMAC-SHA256: 128 bits is plenty for integrity
)

// CursorCodec signs and verifies cursors with one key.
type CursorCodec struct {
	key []byte
}

// NewCursorCodec returns a Codec using key. Every instance of a service must use
// the same key, or cursors fail across instances.
func NewCursorCodec(key []byte) *CursorCodec {
	return &CursorCodec{key: bytes.Clone(key)}
}

func (c *CursorCodec) mac(scope string, payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	// Length-prefix the scope so that (scope, payload) pairs cannot be
	// re-split into a different valid pair.
	fmt.Fprintf(m, "%d:%s", len(scope), scope)
	m.Write(payload)
	return m.Sum(nil)[:macLen]
}

// EncodeCursor returns the token for key in scope.
func EncodeCursor[K any](c *CursorCodec, scope string, key K) (string, error) {
	payload, err := json.Marshal(key)
	if err != nil {
		return "", fmt.Errorf("cursor: encode: %w", err)
	}
	buf := make([]byte, 0, 1+macLen+len(payload))
	buf = append(buf, version)
	buf = append(buf, c.mac(scope, payload)...)
	buf = append(buf, payload...)
	return base64.RawURLEncoding.EncodeToString(buf), nil
}

// DecodeCursor verifies token against scope and returns its key. Unknown fields
// in the payload are rejected even though the MAC already vouches for it,
// so a key struct that changes shape invalidates old cursors instead of
// silently starting from a half-filled key.
func DecodeCursor[K any](c *CursorCodec, scope, token string) (K, error) {
	var zero, key K
	if token == "" || len(token) > MaxCursorLen {
		return zero, ErrInvalidCursor
	}
	// Strict: a token whose last character's unused bits were changed
	// decodes leniently to the same bytes; it is an edited token all the
	// same, and each position has exactly one token.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) < 1+macLen || raw[0] != version {
		return zero, ErrInvalidCursor
	}
	mac, payload := raw[1:1+macLen], raw[1+macLen:]
	if !hmac.Equal(mac, c.mac(scope, payload)) {
		return zero, ErrInvalidCursor
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&key); err != nil {
		return zero, ErrInvalidCursor
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return zero, ErrInvalidCursor
	}
	return key, nil
}

// CursorStartKey decodes token and marshals its key with attributevalue, ready for
// ExclusiveStartKey. An empty token means "first page" and yields nil.
func CursorStartKey[K any](c *CursorCodec, scope, token string) (map[string]types.AttributeValue, error) {
	if token == "" {
		return nil, nil
	}
	key, err := DecodeCursor[K](c, scope, token)
	if err != nil {
		return nil, err
	}
	av, err := attributevalue.MarshalMap(key)
	if err != nil {
		return nil, fmt.Errorf("cursor: marshal start key: %w", err)
	}
	return av, nil
}

// CursorFromLastEvaluatedKey unmarshals a LastEvaluatedKey into K and encodes it.
// A nil or empty key (no more pages) yields "".
func CursorFromLastEvaluatedKey[K any](c *CursorCodec, scope string, lek map[string]types.AttributeValue) (string, error) {
	if len(lek) == 0 {
		return "", nil
	}
	var key K
	if err := attributevalue.UnmarshalMap(lek, &key); err != nil {
		return "", fmt.Errorf("cursor: unmarshal last evaluated key: %w", err)
	}
	return EncodeCursor(c, scope, key)
}
