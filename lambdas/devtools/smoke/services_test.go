package smoke_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	pmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apienv"
	"github.com/dynastack/dynastack/lambdas/devtools/smoke"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestChecksPassAgainstTheHandlers: the checks of ITSM, Nucleus, Stak and
// AgenticPM, each sent by its generated client (lambdas/client/<service>),
// all pass against the dev stage's handler of the service on DynamoDB
// Local, below the local runner's /<service> prefix (Stak's end-user
// routes behind the JWT check the runner puts in front of them, with a
// token of a key made here): the client, its document and the handler
// agree on every call of each sequence. rez_agent's sequence waits for its
// pipeline (SNS, queue, processor, ntfy), which only the runner has: the
// runner's TestSmoke runs it, and every other service's again.
func TestChecksPassAgainstTheHandlers(t *testing.T) {
	tokens := apienv.NewTokens(t, "smoke")
	token := tokens.Sign(t, "u1", "smoke-tenant")

	mux := http.NewServeMux()
	for _, name := range []string{itsmcontract.Name, nucleuscontract.Name, stakcontract.Name, pmcontract.Name} {
		tmpl, tables := testenv.Tables(t, testenv.Template(t, "dev", name))
		h := tokens.Guard(name, apienv.Handler(t, tmpl, tables, name, nil))
		mux.Handle("/"+name+"/", http.StripPrefix("/"+name, h))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	rep := smoke.Run(t.Context(), smoke.Target{URLs: smoke.LocalURLs(srv.URL), StakToken: token, Wait: 5 * time.Second})
	got := map[string][]string{}
	for _, c := range rep.Checks {
		got[c.Service] = append(got[c.Service], c.Name)
		if c.Service != "rezagent" {
			assert.NoError(t, c.Err, "%s: %s", c.Service, c.Name)
		}
	}
	for svc, want := range map[string][]string{
		itsmcontract.Name: {"create ticket", "read ticket", "list tickets of the caller", "comment",
			"status to in_progress", "status to resolved", "status to closed", "closed ticket refuses a comment"},
		nucleuscontract.Name: {"create schedule", "read schedule", "list schedules", "change schedule", "audit log of the schedule",
			"delete schedule", "deleted schedule is gone", "delete schedule"},
		stakcontract.Name: {"end-user token", "tenant settings", "create inbox", "read inbox", "publish message", "feed lists the message",
			"mark read", "user stats", "token of another user is refused"},
		pmcontract.Name: {"create project", "read project", "list active projects", "record event", "list events", "archive project"},
	} {
		assert.Equal(t, want, got[svc], "%s's checks, in order", svc)
	}
}
