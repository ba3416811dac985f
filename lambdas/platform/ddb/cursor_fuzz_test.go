package ddb_test

import (
	"errors"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"testing"
)

// FuzzDecode: whatever a client sends as ?cursor=, Decode answers with a
// key or ErrInvalid (a 400), never another error or a panic; a token it
// accepts is one Encode made for that scope, so it never opens another.
func FuzzDecodeCursor(f *testing.F) {
	c := ddb.NewCursorCodec([]byte("fuzz-key"))
	valid, err := ddb.EncodeCursor(c, "scope/a", pageKey{ID: "t-1", CallerID: "a", CreatedAt: "2026-01-01T00:00:00Z"})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{valid, "", "AQ", valid[:len(valid)-1], valid + "A", "!!!!", "AQAAAAAAAAAAAAAAAAAAAAB7fQ"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		key, err := ddb.DecodeCursor[pageKey](c, "scope/a", token)
		if err != nil {
			if !errors.Is(err, ddb.ErrInvalidCursor) {
				t.Fatalf("Decode(%q) = %v, want ErrInvalid", token, err)
			}
			return
		}
		if _, err := ddb.DecodeCursor[pageKey](c, "scope/b", token); err == nil {
			t.Fatalf("token %q decodes in another scope", token)
		}
		again, err := ddb.EncodeCursor(c, "scope/a", key)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := ddb.DecodeCursor[pageKey](c, "scope/a", again); err != nil || back != key {
			t.Fatalf("re-encoded key %+v decodes to %+v, %v", key, back, err)
		}
	})
}
