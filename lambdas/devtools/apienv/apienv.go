// Package apienv builds a service's HTTP API from a template as the stage
// deploys it: each of its HTTP functions from its own environment in the
// template, joined as API Gateway's route integrations join them
// (services.BuildAPI).
package apienv

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/jwtauth"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services"
)

// Handler is the API of the service named name in tmpl, whose tables are
// tables (testenv.Tables), each function's DynamoDB requests recorded as
// its own. wrap, when not nil, changes each function's environment (a
// fault proxy's endpoint, say).
func Handler(t testing.TB, tmpl *cfntables.Template, tables map[string]string, name string, wrap func(getenv func(string) string) func(string) string) http.Handler {
	t.Helper()
	h, err := services.BuildAPI(name, func(function string, ctor services.Constructor) (http.Handler, error) {
		getenv := testenv.Getenv(t, testenv.ServiceEnv(t, tmpl, tables, function))
		if wrap != nil {
			getenv = wrap(getenv)
		}
		return ctor(t.Context(), getenv, ddbrecord.ClientOptions(getenv)...)
	})
	require.NoError(t, err, "%s API", name)
	return h
}

// Tokens signs end-user tokens with a key of the test's own and checks
// them in front of a service's token routes (service.JWT), as make dev's
// runner does with its local key (cmd/local, guard).
type Tokens struct {
	key      *rsa.PrivateKey
	Verifier jwtauth.Verifier
}

// NewTokens makes a key and a verifier of it for audience.
func NewTokens(t testing.TB, audience string) *Tokens {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return &Tokens{key: key, Verifier: jwtauth.Verifier{Issuer: "https://issuer.test", Audience: audience, Key: &key.PublicKey}}
}

// Sign returns a token of user in tenant, valid for an hour.
func (k *Tokens) Sign(t testing.TB, user, tenant string) string {
	t.Helper()
	token, err := jwtauth.Sign(k.key, map[string]any{"iss": k.Verifier.Issuer, "aud": k.Verifier.Audience, "sub": user,
		"tenant": tenant, "exp": time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	return token
}

// Guard is h behind the token check on the routes of the service named
// name that take a token; h itself when it has none.
func (k *Tokens) Guard(name string, h http.Handler) http.Handler {
	c, _ := catalog.ServiceOf(name)
	var jwt []string
	for _, f := range c.HTTPFunctions() {
		for _, r := range f.Routes {
			if r.Auth == service.JWT {
				jwt = append(jwt, r.Pattern())
			}
		}
	}
	if len(jwt) == 0 {
		return h
	}
	return jwtauth.Middleware(k.Verifier, jwt, h)
}
