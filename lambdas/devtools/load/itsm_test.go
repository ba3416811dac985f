package load_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/load"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestITSMScenarioThroughTheTypedClient: ITSM's mix, sent by the generated
// client (lambdas/client/itsm), against the dev stage's ITSM handler on
// DynamoDB Local below make dev's /itsm prefix: no operation fails, every
// kind of operation ran, and the integrity checks (acknowledged tickets
// readable and listed once, each comment stored once) hold.
func TestITSMScenarioThroughTheTypedClient(t *testing.T) {
	tmpl, tables := testenv.Tables(t, testenv.Template(t, "dev", itsmcontract.Name))
	getenv := testenv.Getenv(t, testenv.ServiceEnv(t, tmpl, tables, itsmcontract.Name))
	build, ok := services.Lookup(itsmcontract.Name)
	require.True(t, ok)
	h, err := build(t.Context(), getenv, ddbrecord.ClientOptions(getenv)...)
	require.NoError(t, err)
	srv := httptest.NewServer(http.StripPrefix("/"+itsmcontract.Name, h))
	t.Cleanup(srv.Close)

	rep, err := load.Run(t.Context(), srv.URL, load.ITSM(), load.Options{Count: 40, Concurrency: 4})
	require.NoError(t, err)
	assert.Zero(t, rep.Errors(), "failed operations, first: %s", rep.FirstError)
	assert.Empty(t, rep.Problems, "integrity problems")
	assert.NotZero(t, rep.Acked, "no create acknowledged")
	for _, st := range rep.Ops {
		assert.NotZero(t, st.Count, "%s: never ran", st.Op)
	}
	assert.Len(t, rep.Ops, 4, "create, read, update and list ran")
}
