// Package jwtauth verifies JSON Web Tokens as an API Gateway HTTP API JWT
// authorizer does, for the routes the gateway would, so that the local
// runner (make dev) and tests enforce what AWS documents its authorizer
// enforcing: a kid naming a key of the issuer's JWKS (locally: the one
// key, by its RFC 7638 thumbprint), a valid signature with an RSA
// algorithm (RS256, RS384, RS512; never "none" or an HMAC), the issuer, an
// audience of the authorizer in aud, or in client_id when aud is absent,
// exp after now, and nbf and iat before it. A verified token's claims
// reach the handler the way lambdahttp passes API Gateway's: as an
// api.Caller in the request context. Which claims the service needs (sub,
// tenant) is the handler's business, as in AWS.
//
// In AWS the gateway verifies tokens (against the issuer's JWKS); this
// package is not in the Lambda path.
package jwtauth

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	_ "crypto/sha512" // RS384 and RS512
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrInvalid is any token the gateway would refuse (401).
var ErrInvalid = errors.New("jwtauth: invalid token")

// MaxTokenLen bounds what Verify parses.
const MaxTokenLen = 8 << 10

// Verifier checks tokens of one issuer and audience.
type Verifier struct {
	Issuer, Audience string
	Key              *rsa.PublicKey
	// Now defaults to time.Now.
	Now func() time.Time
}

// Claims are a verified token's claims as API Gateway passes them to the
// integration: every claim as a string (numbers in decimal, arrays as
// "[a b]" as the gateway does).
type Claims map[string]string

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Verify checks token and returns its claims.
func (v Verifier) Verify(token string) (Claims, error) {
	if len(token) > MaxTokenLen {
		return nil, invalid("longer than %d bytes", MaxTokenLen)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, invalid("not three base64url parts")
	}
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
	}
	if err := decodePart(parts[0], &header); err != nil {
		return nil, invalid("header: %v", err)
	}
	hash, ok := rsaHashes[header.Alg]
	if !ok {
		// "none", HS256 keyed with the public key, and every other
		// algorithm: the gateway takes RSA-based ones only.
		return nil, invalid("alg %q; only RS256, RS384 and RS512 are accepted", header.Alg)
	}
	if want := KeyID(v.Key); header.Kid != want {
		return nil, invalid("kid %q names no key of the issuer's JWKS (want %q)", header.Kid, want)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, invalid("signature is not base64url")
	}
	h := hash.New()
	h.Write([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(v.Key, hash, h.Sum(nil), sig); err != nil {
		return nil, invalid("bad signature")
	}
	var raw map[string]any
	if err := decodePart(parts[1], &raw); err != nil {
		return nil, invalid("payload: %v", err)
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	t := now().Unix()
	if iss, _ := raw["iss"].(string); iss != v.Issuer {
		return nil, invalid("issuer %q, want %q", iss, v.Issuer)
	}
	// The gateway checks client_id only when aud is absent, and aud
	// when both are there.
	if aud, ok := raw["aud"]; ok {
		if !hasAudience(aud, v.Audience) {
			return nil, invalid("audience is not %q", v.Audience)
		}
	} else if cid, _ := raw["client_id"].(string); cid != v.Audience {
		return nil, invalid("no aud, and client_id %q is not %q", cid, v.Audience)
	}
	exp, ok := number(raw["exp"])
	if !ok {
		return nil, invalid("no exp")
	}
	if t >= exp {
		return nil, invalid("expired at %d", exp)
	}
	if nbf, ok := number(raw["nbf"]); ok && t < nbf {
		return nil, invalid("not valid before %d", nbf)
	}
	if iat, ok := number(raw["iat"]); ok && t < iat {
		return nil, invalid("issued in the future, at %d", iat)
	}
	claims := Claims{}
	for k, val := range raw {
		claims[k] = claimString(val)
	}
	return claims, nil
}

func decodePart(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return errors.New("not base64url")
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return errors.New("not a JSON object")
	}
	return nil
}

func hasAudience(aud any, want string) bool {
	switch a := aud.(type) {
	case string:
		return a == want
	case []any:
		for _, e := range a {
			if s, _ := e.(string); s == want {
				return true
			}
		}
	}
	return false
}

func number(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	return int64(f), err == nil
}

func claimString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = claimString(e)
		}
		return "[" + strings.Join(s, " ") + "]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// rsaHashes are the algorithms the gateway accepts, with their hashes.
var rsaHashes = map[string]crypto.Hash{"RS256": crypto.SHA256, "RS384": crypto.SHA384, "RS512": crypto.SHA512}

// KeyID is the kid of pub in the local JWKS: its RFC 7638 thumbprint
// (the SHA-256 of {"e","kty","n"}, base64url).
func KeyID(pub *rsa.PublicKey) string {
	enc := base64.RawURLEncoding
	e := enc.EncodeToString(big.NewInt(int64(pub.E)).Bytes())
	sum := sha256.Sum256([]byte(`{"e":"` + e + `","kty":"RSA","n":"` + enc.EncodeToString(pub.N.Bytes()) + `"}`))
	return enc.EncodeToString(sum[:])
}

// Sign returns an RS256 token of claims with the key's kid: what `make
// token` mints and tests send.
func Sign(key *rsa.PrivateKey, claims map[string]any) (string, error) {
	return SignWithHeader(key, map[string]any{"alg": "RS256", "typ": "JWT", "kid": KeyID(&key.PublicKey)}, claims)
}

// SignWithHeader signs with the RSA algorithm the header names (RS256 for
// any other, for tests of tokens that lie about their algorithm) and
// adds nothing to the header.
func SignWithHeader(key *rsa.PrivateKey, header, claims map[string]any) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	alg, _ := header["alg"].(string)
	hash, ok := rsaHashes[alg]
	if !ok {
		hash = crypto.SHA256
	}
	sum := hash.New()
	sum.Write([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, hash, sum.Sum(nil))
	if err != nil {
		return "", err
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// LoadOrCreateKey reads the PEM RSA key at path, creating a 2048-bit one
// (mode 0600) when there is none: the local signing key of make dev and
// make token.
func LoadOrCreateKey(path string) (*rsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		out := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
		if err := os.WriteFile(path, out, 0o600); err != nil {
			return nil, err
		}
		return key, nil
	}
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("jwtauth: %s holds no PEM block", path)
	}
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("jwtauth: %s: %w", path, err)
	}
	return key, nil
}
