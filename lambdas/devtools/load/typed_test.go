package load_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/apienv"
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
	tokens := apienv.NewTokens(t, "load")
	token := tokens.Sign(t, load.StakUser, load.StakTenant)
	for _, tt := range []struct {
		sc  load.Scenario
		ops int
	}{{load.ITSM(), 4}, {load.RezAgent(), 3}, {load.Nucleus(), 4}, {load.AgenticPM(), 4}, {load.Stak(token), 3}} {
		t.Run(tt.sc.Service, func(t *testing.T) {
			name := tt.sc.Service
			tmpl, tables := testenv.Tables(t, testenv.Template(t, "dev", name))
			h := tokens.Guard(name, apienv.Handler(t, tmpl, tables, name, nil))
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
