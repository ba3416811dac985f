package jwtauth_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/jwtauth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The key is made once and read back; a token of it verifies with the
// claims as the gateway passes them (strings), an audience list that
// includes ours is accepted, and the clock bounds are exclusive of exp.
func TestVerify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k", "key.pem")
	key, err := jwtauth.LoadOrCreateKey(path)
	require.NoError(t, err)
	again, err := jwtauth.LoadOrCreateKey(path)
	require.NoError(t, err, "second load")
	require.True(t, again.Equal(key), "second load: not the same key")
	now := time.Unix(1_800_000_000, 0)
	v := jwtauth.Verifier{Issuer: "https://i/", Audience: "a", Key: &key.PublicKey, Now: func() time.Time { return now }}
	tok, err := jwtauth.Sign(key, map[string]any{"iss": "https://i/", "aud": []string{"x", "a"}, "sub": "u1", "tenant": "acme", "exp": now.Unix() + 1, "admin": true})
	require.NoError(t, err)
	c, err := v.Verify(tok)
	require.NoError(t, err)
	assert.Equal(t, "u1", c["sub"], "claim sub")
	assert.Equal(t, "acme", c["tenant"], "claim tenant")
	assert.Equal(t, "true", c["admin"], "claim admin")
	assert.Equal(t, "[x a]", c["aud"], "claim aud")
	assert.Equal(t, "1800000001", c["exp"], "claim exp")
	at := func(sec int64) error {
		v.Now = func() time.Time { return time.Unix(sec, 0) }
		_, err := v.Verify(tok)
		return err
	}
	assert.ErrorIs(t, at(now.Unix()+1), jwtauth.ErrInvalid, "at exp")
	_, err = (jwtauth.Verifier{Issuer: "https://i/", Audience: "a", Key: &key.PublicKey}).Verify(tok + "x")
	assert.ErrorIs(t, err, jwtauth.ErrInvalid, "changed signature")
}
