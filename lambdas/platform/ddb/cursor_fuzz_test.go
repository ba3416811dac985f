package ddb_test

import (
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/require"
	"testing"
)

// FuzzDecode: whatever a client sends as ?cursor=, Decode answers with a
// key or ErrInvalid (a 400), never another error or a panic; a token it
// accepts is one Encode made for that scope, so it never opens another.
func FuzzDecodeCursor(f *testing.F) {
	c := ddb.NewCursorCodec([]byte("fuzz-key"))
	valid, err := ddb.EncodeCursor(c, "scope/a", pageKey{ID: "t-1", CallerID: "a", CreatedAt: "2026-01-01T00:00:00Z"})
	require.NoError(f, err)
	for _, seed := range []string{valid, "", "AQ", valid[:len(valid)-1], valid + "A", "!!!!", "AQAAAAAAAAAAAAAAAAAAAAB7fQ"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		key, err := ddb.DecodeCursor[pageKey](c, "scope/a", token)
		if err != nil {
			require.ErrorIs(t, err, ddb.ErrInvalidCursor, "Decode(%q)", token)
			return
		}
		_, err = ddb.DecodeCursor[pageKey](c, "scope/b", token)
		require.Error(t, err, "token %q decodes in another scope", token)
		again, err := ddb.EncodeCursor(c, "scope/a", key)
		require.NoError(t, err)
		back, err := ddb.DecodeCursor[pageKey](c, "scope/a", again)
		require.NoError(t, err, "re-encoded key %+v", key)
		require.Equal(t, key, back, "re-encoded key decodes to itself")
	})
}
