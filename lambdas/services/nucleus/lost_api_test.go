package nucleus_test

import (
	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Nucleus writes every change with its audit entry in one transaction;
// the SDK gives each transaction a client request token, so a retry after
// a lost answer is DynamoDB's no-op: the account is created once, with
// one audit entry, and the client gets its 201.
func TestCreateAccountWithLostAnswer(t *testing.T) {
	s := newService(t, options{})
	client, proxy := servicetest.FaultyClient(t, "nucleus")
	cfg := servicetest.Config(t, nucleus.ConfigFromEnv, map[string]string{contract.EnvAppTable: s.tables.App, contract.EnvAuditTable: s.tables.Audit})
	cfg.Client, cfg.Logger = client, servicetest.Logger()
	lossy := s.Service
	lossy.H = nucleus.NewHandler(cfg)

	const id = "222222222222"
	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	lossy.MustRoute(t, 201, contract.CreateAccount, `{"account_id":"`+id+`","account_name":"acct","role_arn":"arn:aws:iam::`+id+`:role/nucleus-executor-target"}`, nil)
	require.Equal(t, 1, proxy.Faults(), "answers dropped: want the transaction's")
	assert.Len(t, s.audit(t, contract.EntityLog.URL("account", id)).Entries, 1, "audit entries for one create")
}
