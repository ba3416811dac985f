package stak_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/jwtauth"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

// TestAuthorization sends every end-user route real RS256 tokens through
// the verifier the local runner puts where API Gateway's JWT authorizer
// is: only a valid token of the path's own tenant and user is served; every
// other token is a 401 (the gateway's) or a 403 (the handler's), and
// nothing is read or written.
func TestAuthorization(t *testing.T) {
	meter := &ddbrecord.Recorder{}
	s := newService(t, meter)
	s.setup(t)
	pub := s.toUsers(t, "hello", "", "u1", "u2")
	id := pub.Header.ID
	key, other := rsaKey(t), rsaKey(t)
	const iss, aud = "https://auth.test.example/", "stak-test"
	h := jwtauth.Middleware(jwtauth.Verifier{Issuer: iss, Audience: aud, Key: &key.PublicKey}, stak.UserRoutes, s.api)
	now := time.Now().Unix()
	claims := func(edit map[string]any) map[string]any {
		c := map[string]any{"iss": iss, "aud": aud, "sub": "u1", "tenant": "acme", "iat": now, "nbf": now - 10, "exp": now + 600}
		for k, v := range edit {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	sign := func(k *rsa.PrivateKey, header, c map[string]any) string {
		tok, err := jwtauth.SignWithHeader(k, header, c)
		require.NoError(t, err, "sign")
		return tok
	}
	kid := jwtauth.KeyID(&key.PublicKey)
	rs256 := map[string]any{"alg": "RS256", "typ": "JWT", "kid": kid}
	valid := sign(key, rs256, claims(nil))
	noneParts := strings.Split(sign(key, map[string]any{"alg": "none"}, claims(nil)), ".")
	tokens := []struct {
		name   string
		token  string
		status int
	}{
		{"no token", "", 401},
		{"expired", sign(key, rs256, claims(map[string]any{"exp": now - 1})), 401},
		{"not yet valid", sign(key, rs256, claims(map[string]any{"nbf": now + 300})), 401},
		{"no exp", sign(key, rs256, claims(map[string]any{"exp": nil})), 401},
		{"wrong issuer", sign(key, rs256, claims(map[string]any{"iss": "https://evil.example/"})), 401},
		{"wrong audience", sign(key, rs256, claims(map[string]any{"aud": "other-api"})), 401},
		{"bad signature", sign(other, rs256, claims(nil)), 401},
		{"tampered claims", tamper(t, valid), 401},
		{"alg none", noneParts[0] + "." + noneParts[1] + ".", 401},
		{"alg HS256", sign(key, map[string]any{"alg": "HS256"}, claims(nil)), 401},
		{"not a JWT", "abc", 401},
		{"other tenant", sign(key, rs256, claims(map[string]any{"tenant": "globex"})), 403},
		{"no tenant claim", sign(key, rs256, claims(map[string]any{"tenant": nil})), 403},
		{"other user", sign(key, rs256, claims(map[string]any{"sub": "u2"})), 403},
		{"audience list without ours", sign(key, rs256, claims(map[string]any{"aud": []string{"a", "b"}})), 401},
		// API Gateway's documented rules beyond those: the kid names a key
		// of the JWKS, iat is not in the future, and client_id stands in
		// for aud only when aud is absent.
		{"no kid", sign(key, map[string]any{"alg": "RS256"}, claims(nil)), 401},
		{"unknown kid", sign(key, map[string]any{"alg": "RS256", "kid": "other-key"}, claims(nil)), 401},
		{"issued in the future", sign(key, rs256, claims(map[string]any{"iat": now + 300})), 401},
		{"no aud, other client_id", sign(key, rs256, claims(map[string]any{"aud": nil, "client_id": "other-api"})), 401},
		{"wrong aud, our client_id", sign(key, rs256, claims(map[string]any{"aud": "other-api", "client_id": aud})), 401},
	}
	routes := []struct{ method, path, body string }{
		{contract.Feed.Method, contract.Feed.URL("acme", "main", "u1"), ""},
		{contract.MarkRead.Method, contract.MarkRead.URL("acme", "main", "u1", id), ""},
		{contract.Stats.Method, contract.Stats.URL("acme", "main", "u1"), ""},
		{contract.ReadAll.Method, contract.ReadAll.URL("acme", "main", "u1"), `{}`},
	}
	require.Len(t, routes, len(stak.UserRoutes), "routes tested against the user routes")
	before := s.Digest(t)
	for _, tok := range tokens {
		for _, rt := range routes {
			t.Run(tok.name+" "+rt.method+" "+rt.path, func(t *testing.T) {
				meter.Reset()
				var headers []string
				if tok.token != "" {
					headers = []string{"Authorization", "Bearer " + tok.token}
				}
				r := apitest.Do(t, h, rt.method, rt.path, rt.body, headers...)
				if tok.status == 401 {
					// API Gateway's own answer.
					assert.Equal(t, 401, r.Status, "the gateway's 401")
					assert.Equal(t, `{"message":"Unauthorized"}`, string(r.Body), "the gateway's 401")
				} else {
					apitest.WantError(t, r, tok.status, "forbidden", "", "")
				}
				assert.Zero(t, meter.Requests(), "DynamoDB requests for a refused token: %s", meter)
			})
		}
	}
	assert.Equal(t, before, s.Digest(t), "refused tokens changed the table")
	// The same routes with the user's own token: served, also signed with
	// RS512, and with client_id in place of an absent aud.
	for _, tok := range []string{valid,
		sign(key, map[string]any{"alg": "RS512", "kid": kid}, claims(nil)),
		sign(key, rs256, claims(map[string]any{"aud": nil, "client_id": aud})),
	} {
		for _, rt := range routes {
			r := apitest.Do(t, h, rt.method, rt.path, rt.body, "Authorization", "Bearer "+tok)
			assert.Equal(t, http.StatusOK, r.Status, "own token %s %s: %s", rt.method, rt.path, r.Body)
		}
	}
	// The gateway does not require sub; the handler does (it binds the
	// path's uid to it), so a token without one is the handler's 401.
	noSub := sign(key, rs256, claims(map[string]any{"sub": nil}))
	apitest.WantError(t, apitest.Do(t, h, "GET", routes[0].path, "", "Authorization", "Bearer "+noSub), 401, "unauthorized", "", "")
	// Publisher routes are not the verifier's: they pass through to the
	// handler without a token (in AWS, SigV4 guards them).
	r := apitest.Do(t, h, contract.GetTenant.Method, contract.GetTenant.URL("acme"), "")
	assert.Equal(t, http.StatusOK, r.Status, "settings without a token: %s", r.Body)
}

func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err, "RSA key")
	return k
}

// tamper changes the payload of tok and keeps its signature.
func tamper(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	b := []byte(parts[1])
	b[len(b)/2] ^= 1
	return parts[0] + "." + string(b) + "." + parts[2]
}
