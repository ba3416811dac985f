package smoke_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/smoke"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestITSMChecksPassAgainstTheHandler: ITSM's checks, sent by the generated
// client (lambdas/client/itsm), all pass against the dev stage's ITSM
// handler on DynamoDB Local, below the local runner's /itsm prefix: the
// client, its document and the handler agree on every call of the
// sequence, from the create to the refused comment on a closed ticket.
func TestITSMChecksPassAgainstTheHandler(t *testing.T) {
	tmpl, tables := testenv.Tables(t, testenv.Template(t, "dev", itsmcontract.Name))
	getenv := testenv.Getenv(t, testenv.ServiceEnv(t, tmpl, tables, itsmcontract.Name))
	build, ok := services.Lookup(itsmcontract.Name)
	require.True(t, ok)
	h, err := build(t.Context(), getenv, ddbrecord.ClientOptions(getenv)...)
	require.NoError(t, err)
	mux := httptest.NewServer(http.StripPrefix("/"+itsmcontract.Name, h))
	t.Cleanup(mux.Close)

	rep := smoke.Run(t.Context(), smoke.Target{URLs: smoke.LocalURLs(mux.URL), Wait: 5 * time.Second})
	var names []string
	for _, c := range rep.Checks {
		if c.Service != itsmcontract.Name {
			continue
		}
		names = append(names, c.Name)
		assert.NoError(t, c.Err, "itsm: %s", c.Name)
	}
	assert.Equal(t, []string{"create ticket", "read ticket", "list tickets of the caller", "comment",
		"status to in_progress", "status to resolved", "status to closed", "closed ticket refuses a comment"}, names, "ITSM's checks, in order")
}
