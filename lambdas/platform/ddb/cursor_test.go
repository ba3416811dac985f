package ddb_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type pageKey struct {
	ID        string `json:"id" dynamodbav:"ticket_id"`
	CallerID  string `json:"c" dynamodbav:"caller_id"`
	CreatedAt string `json:"t" dynamodbav:"created_at"`
}

func TestRoundTrip(t *testing.T) {
	c := ddb.NewCursorCodec([]byte("k"))
	in := pageKey{"id-1", "caller-1", "2026-02-09T12:20:25.343883Z"}
	tok, err := ddb.EncodeCursor(c, "tickets/caller-1", in)
	require.NoError(t, err)
	assert.NotContains(t, tok, "caller-1", "token is not opaque")
	assert.False(t, strings.ContainsAny(tok, "+/="), "token %q is not base64url", tok)
	out, err := ddb.DecodeCursor[pageKey](c, "tickets/caller-1", tok)
	require.NoError(t, err, "Decode")
	require.Equal(t, in, out, "Decode")
}

func TestRejects(t *testing.T) {
	c := ddb.NewCursorCodec([]byte("k"))
	good, _ := ddb.EncodeCursor(c, "tickets/a", pageKey{"1", "a", "t"})
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	otherKey, _ := ddb.EncodeCursor(ddb.NewCursorCodec([]byte("other")), "tickets/a", pageKey{"1", "a", "t"})
	extraField, _ := ddb.EncodeCursor(c, "tickets/a", map[string]string{"id": "1", "evil": "x"})

	tests := []struct {
		name, scope, token string
	}{
		{"other scope", "tickets/b", good},
		{"other key", "tickets/a", otherKey},
		{"flipped version", "tickets/a", flip(0)},
		{"flipped mac", "tickets/a", flip(3)},
		{"flipped payload", "tickets/a", flip(len(raw) - 3)},
		{"truncated", "tickets/a", good[:10]},
		{"not base64", "tickets/a", "!!!"},
		{"std base64 padding", "tickets/a", good + "=="},
		{"empty", "tickets/a", ""},
		{"huge", "tickets/a", strings.Repeat("A", ddb.MaxCursorLen+1)},
		{"unknown field", "tickets/a", extraField},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ddb.DecodeCursor[pageKey](c, tt.scope, tt.token)
			assert.ErrorIs(t, err, ddb.ErrInvalidCursor, "Decode")
		})
	}
}

// TestRejectsEditedPadBits: the last character of a token whose length
// is not a multiple of 4 carries bits that encode nothing; a token with
// them changed is an edited token (it decodes to the same bytes when base64
// is read leniently), so it is refused like any other edit.
func TestRejectsEditedPadBits(t *testing.T) {
	c := ddb.NewCursorCodec([]byte("k"))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	edited := 0
	for _, id := range []string{"1", "12", "123"} {
		good, err := ddb.EncodeCursor(c, "tickets/a", pageKey{id, "a", "t"})
		require.NoError(t, err)
		unused := map[int]int{2: 4, 3: 2}[len(good)%4] // bits of the last character that encode nothing
		if unused == 0 {
			continue
		}
		last := strings.IndexByte(alphabet, good[len(good)-1])
		for bits := 1; bits < 1<<unused; bits++ {
			tok := good[:len(good)-1] + string(alphabet[last^bits])
			_, err := ddb.DecodeCursor[pageKey](c, "tickets/a", tok)
			assert.ErrorIs(t, err, ddb.ErrInvalidCursor, "%q, %q with its unused bits changed", tok, good)
			edited++
		}
	}
	require.NotZero(t, edited, "tokens with unused bits (none proves nothing)")
}

func TestLastEvaluatedKeyRoundTrip(t *testing.T) {
	c := ddb.NewCursorCodec([]byte("k"))
	lek, err := attributevalue.MarshalMap(pageKey{"1", "a", "t"})
	require.NoError(t, err)
	tok, err := ddb.CursorFromLastEvaluatedKey[pageKey](c, "s", lek)
	require.NoError(t, err, "FromLastEvaluatedKey")
	require.NotEmpty(t, tok, "FromLastEvaluatedKey")
	start, err := ddb.CursorStartKey[pageKey](c, "s", tok)
	require.NoError(t, err)
	assert.Len(t, start, 3, "start key")
	assert.Equal(t, &types.AttributeValueMemberS{Value: "a"}, start["caller_id"], "start key's caller_id")
	tok, _ = ddb.CursorFromLastEvaluatedKey[pageKey](c, "s", nil)
	assert.Empty(t, tok, "empty LastEvaluatedKey")
	start, err = ddb.CursorStartKey[pageKey](c, "s", "")
	assert.Nil(t, start, "empty token")
	assert.NoError(t, err, "empty token")
}

// A cursor is bound to the query it came from: the same token does not
// decode under another caller's scope.
func ExampleEncodeCursor() {
	type key struct {
		TicketID  string `json:"id" dynamodbav:"ticket_id"`
		CallerID  string `json:"c" dynamodbav:"caller_id"`
		CreatedAt string `json:"t" dynamodbav:"created_at"`
	}
	codec := ddb.NewCursorCodec([]byte("service secret"))

	last := key{"33567ee8", "poc-user-001", "2026-02-09T12:20:25.343883Z"}
	token, _ := ddb.EncodeCursor(codec, "tickets-by-caller/poc-user-001", last)

	start, err := ddb.CursorStartKey[key](codec, "tickets-by-caller/poc-user-001", token)
	fmt.Println(len(start), err)

	_, err = ddb.CursorStartKey[key](codec, "tickets-by-caller/someone-else", token)
	fmt.Println(errors.Is(err, ddb.ErrInvalidCursor))
	// Output:
	// 3 <nil>
	// true
}

func TestKeyFromEnv(t *testing.T) {
	unset := func(string) string { return "" }
	a, b := ddb.CursorKeyFromEnv(unset, "svc/cursor/t1"), ddb.CursorKeyFromEnv(unset, "svc/cursor/t2")
	assert.Len(t, a, 32, "derived key")
	assert.NotEqual(t, a, b, "derived keys: distinct across seeds")
	assert.Equal(t, a, ddb.CursorKeyFromEnv(unset, "svc/cursor/t1"), "derived keys: stable per seed")
	set := func(k string) string { return map[string]string{service.EnvCursorKey: "secret"}[k] }
	assert.Equal(t, "secret", string(ddb.CursorKeyFromEnv(set, "svc/cursor/t1")), "KeyFromEnv with %s set", service.EnvCursorKey)
}

func ExampleCursorKeyFromEnv() {
	getenv := func(k string) string { return map[string]string{service.EnvCursorKey: "from-the-environment"}[k] }
	fmt.Printf("%s\n", ddb.CursorKeyFromEnv(getenv, "itsm/cursor/tickets"))
	fmt.Printf("%x\n", ddb.CursorKeyFromEnv(func(string) string { return "" }, "itsm/cursor/tickets")[:8])
	// Output:
	// from-the-environment
	// 19505dce5586b8a0
}
