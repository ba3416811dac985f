package load_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apienv"
	"github.com/dynastack/dynastack/lambdas/devtools/jwtauth"
	"github.com/dynastack/dynastack/lambdas/devtools/load"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestScenariosThroughTheTypedClients: every service's mix, sent by its
// generated client (lambdas/client/<service>), against the dev stage's
// handler of the service on DynamoDB Local below make dev's /<service>
// prefix (Stak's end-user routes behind the JWT check the runner puts in
// front of them, with a token of a key made here): no operation fails,
// every kind of operation of the mix ran, and the integrity checks
// (acknowledged items readable and listed once, each ITSM comment, Nucleus
// audit entry and AgenticPM event stored once, Stak's counters equal to
// the acknowledged publishes and reads) hold.
func TestScenariosThroughTheTypedClients(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	verifier := jwtauth.Verifier{Issuer: "https://issuer.test", Audience: "load", Key: &key.PublicKey}
	token, err := jwtauth.Sign(key, map[string]any{"iss": verifier.Issuer, "aud": verifier.Audience, "sub": load.StakUser,
		"tenant": load.StakTenant, "exp": time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	for _, tt := range []struct {
		sc  load.Scenario
		ops int
	}{{load.ITSM(), 4}, {load.RezAgent(), 3}, {load.Nucleus(), 4}, {load.AgenticPM(), 4}, {load.Stak(token), 3}} {
		t.Run(tt.sc.Service, func(t *testing.T) {
			name := tt.sc.Service
			tmpl, tables := testenv.Tables(t, testenv.Template(t, "dev", name))
			h := apienv.Handler(t, tmpl, tables, name, nil)
			if name == stakcontract.Name {
				var jwt []string
				for _, r := range stakcontract.API.Routes {
					if r.Auth == service.JWT {
						jwt = append(jwt, r.Pattern())
					}
				}
				h = jwtauth.Middleware(verifier, jwt, h)
			}
			srv := httptest.NewServer(http.StripPrefix("/"+name, h))
			t.Cleanup(srv.Close)

			rep, err := load.Run(t.Context(), srv.URL, tt.sc, load.Options{Count: 40, Concurrency: 4})
			require.NoError(t, err)
			assert.Zero(t, rep.Errors(), "failed operations, first: %s", rep.FirstError)
			assert.Empty(t, rep.Problems, "integrity problems")
			assert.NotZero(t, rep.Acked, "no create acknowledged")
			for _, st := range rep.Ops {
				assert.NotZero(t, st.Count, "%s: never ran", st.Op)
			}
			assert.Len(t, rep.Ops, tt.ops, "the mix's operation kinds ran")
		})
	}
}
