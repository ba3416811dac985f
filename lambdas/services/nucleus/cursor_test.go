package nucleus_test

import (
	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/require"
)

// TestForgedCursor: cursors are not secret (docs/functions.md, "Cursors"),
// so anyone can mint one. A position outside the key range of the query
// answers 400; before the range checks one above until was a 500.
func TestForgedCursor(t *testing.T) {
	s := newService(t, options{})
	s.createAccount(t, "111111111111", "one", "active")
	type pageKey struct {
		PK     string `json:"p"`
		SK     string `json:"s"`
		GSI1PK string `json:"gp,omitempty"`
		GSI1SK string `json:"gs,omitempty"`
	}
	codec := ddb.NewCursorCodec(nucleusKey(t, s.tables))
	until := nucleus.Timestamp(time.Now().Add(-time.Hour))
	forge := func(scope string, k pageKey) string {
		tok, err := ddb.EncodeCursor(codec, scope, k)
		require.NoError(t, err)
		return tok
	}
	for _, tt := range []struct{ name, path string }{
		{"timeline above until", contract.Timeline.URL() + "?until=" + until + "&cursor=" + forge("nucleus/audit/timeline?since=&until="+until,
			pageKey{PK: "ACCOUNT#111111111111", SK: "TIMESTAMP#9999", GSI1PK: "AUDIT#GLOBAL", GSI1SK: "TIMESTAMP#9999"})},
		{"entity above until", contract.EntityLog.URL("account", "111111111111") + "?until=" + until + "&cursor=" + forge("nucleus/audit/entity/ACCOUNT#111111111111?since=&until="+until,
			pageKey{PK: "ACCOUNT#111111111111", SK: "TIMESTAMP#9999"})},
		{"index cursor of another partition", contract.Timeline.URL() + "?cursor=" + forge("nucleus/audit/timeline?since=&until=",
			pageKey{PK: "ACCOUNT#111111111111", SK: "TIMESTAMP#1", GSI1PK: "ACCOUNT#111111111111", GSI1SK: "TIMESTAMP#1"})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			app, audit := s.counts(t)
			r := s.Do(t, "GET", tt.path, "")
			require.Equal(t, 400, r.Status, "forged cursor: %s", r.Body)
			s.wantCounts(t, app, audit)
		})
	}
}

func nucleusKey(t *testing.T, tables nucleus.Tables) []byte {
	t.Helper()
	env := map[string]string{contract.EnvAppTable: tables.App, contract.EnvAuditTable: tables.Audit}
	cfg, err := nucleus.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	return cfg.CursorKey
}
