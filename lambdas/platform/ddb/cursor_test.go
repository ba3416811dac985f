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
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tok, "caller-1") || strings.ContainsAny(tok, "+/=") {
		t.Errorf("token %q is not opaque base64url", tok)
	}
	out, err := ddb.DecodeCursor[pageKey](c, "tickets/caller-1", tok)
	if err != nil || out != in {
		t.Fatalf("Decode = %+v, %v", out, err)
	}
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
			if _, err := ddb.DecodeCursor[pageKey](c, tt.scope, tt.token); !errors.Is(err, ddb.ErrInvalidCursor) {
				t.Errorf("Decode = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestLastEvaluatedKeyRoundTrip(t *testing.T) {
	c := ddb.NewCursorCodec([]byte("k"))
	lek, err := attributevalue.MarshalMap(pageKey{"1", "a", "t"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ddb.CursorFromLastEvaluatedKey[pageKey](c, "s", lek)
	if err != nil || tok == "" {
		t.Fatalf("FromLastEvaluatedKey = %q, %v", tok, err)
	}
	start, err := ddb.CursorStartKey[pageKey](c, "s", tok)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := start["caller_id"].(*types.AttributeValueMemberS); !ok || v.Value != "a" || len(start) != 3 {
		t.Errorf("start key = %#v", start)
	}
	if tok, _ := ddb.CursorFromLastEvaluatedKey[pageKey](c, "s", nil); tok != "" {
		t.Errorf("empty LastEvaluatedKey gave %q", tok)
	}
	if start, err := ddb.CursorStartKey[pageKey](c, "s", ""); start != nil || err != nil {
		t.Errorf("empty token = %v, %v", start, err)
	}
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
	if len(a) != 32 || string(a) == string(b) || string(a) != string(ddb.CursorKeyFromEnv(unset, "svc/cursor/t1")) {
		t.Errorf("derived keys %x %x: want 32 bytes, stable per seed, distinct across seeds", a, b)
	}
	set := func(k string) string { return map[string]string{service.EnvCursorKey: "secret"}[k] }
	if k := ddb.CursorKeyFromEnv(set, "svc/cursor/t1"); string(k) != "secret" {
		t.Errorf("KeyFromEnv with %s set = %q, want secret", service.EnvCursorKey, k)
	}
}

func ExampleCursorKeyFromEnv() {
	getenv := func(k string) string { return map[string]string{service.EnvCursorKey: "from-the-environment"}[k] }
	fmt.Printf("%s\n", ddb.CursorKeyFromEnv(getenv, "itsm/cursor/tickets"))
	fmt.Printf("%x\n", ddb.CursorKeyFromEnv(func(string) string { return "" }, "itsm/cursor/tickets")[:8])
	// Output:
	// from-the-environment
	// 19505dce5586b8a0
}
