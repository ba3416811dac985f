package jwtauth_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/jwtauth"
)

// The key is made once and read back; a token of it verifies with the
// claims as the gateway passes them (strings), an audience list that
// includes ours is accepted, and the clock bounds are exclusive of exp.
func TestVerify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k", "key.pem")
	key, err := jwtauth.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := jwtauth.LoadOrCreateKey(path)
	if err != nil || !again.Equal(key) {
		t.Fatalf("second load: %v, same key %v", err, again.Equal(key))
	}
	now := time.Unix(1_800_000_000, 0)
	v := jwtauth.Verifier{Issuer: "https://i/", Audience: "a", Key: &key.PublicKey, Now: func() time.Time { return now }}
	tok, err := jwtauth.Sign(key, map[string]any{"iss": "https://i/", "aud": []string{"x", "a"}, "sub": "u1", "tenant": "acme", "exp": now.Unix() + 1, "admin": true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if c["sub"] != "u1" || c["tenant"] != "acme" || c["admin"] != "true" || c["aud"] != "[x a]" || c["exp"] != "1800000001" {
		t.Errorf("claims %v", c)
	}
	at := func(sec int64) error {
		v.Now = func() time.Time { return time.Unix(sec, 0) }
		_, err := v.Verify(tok)
		return err
	}
	if err := at(now.Unix() + 1); !errors.Is(err, jwtauth.ErrInvalid) {
		t.Errorf("at exp: %v, want ErrInvalid", err)
	}
	if _, err := (jwtauth.Verifier{Issuer: "https://i/", Audience: "a", Key: &key.PublicKey}).Verify(tok + "x"); !errors.Is(err, jwtauth.ErrInvalid) {
		t.Errorf("changed signature: %v", err)
	}
}
