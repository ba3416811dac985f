package load_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/load"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestScenariosThroughTheTypedClients: ITSM's and rez_agent's mixes, sent
// by the generated clients (lambdas/client/<service>), against the dev
// stage's handler of each on DynamoDB Local below make dev's /<service>
// prefix: no operation fails, every kind of operation of the mix ran, and
// the integrity checks (acknowledged items readable and listed once, each
// ITSM comment stored once) hold.
func TestScenariosThroughTheTypedClients(t *testing.T) {
	for _, tt := range []struct {
		sc  load.Scenario
		ops int
	}{{load.ITSM(), 4}, {load.RezAgent(), 3}} {
		t.Run(tt.sc.Service, func(t *testing.T) {
			name := tt.sc.Service
			tmpl, tables := testenv.Tables(t, testenv.Template(t, "dev", name))
			getenv := testenv.Getenv(t, testenv.ServiceEnv(t, tmpl, tables, name))
			build, ok := services.Lookup(name)
			require.True(t, ok)
			h, err := build(t.Context(), getenv, ddbrecord.ClientOptions(getenv)...)
			require.NoError(t, err)
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
