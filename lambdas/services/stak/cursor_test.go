package stak_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

// TestForgedCursor: a cursor is not secret (docs/functions.md, "Cursors"),
// so anyone can mint one with any position. One whose position lies
// outside the partition range the route queries answers 400 and reads
// nothing past the check; before the range checks it was a 500 (DynamoDB's
// ValidationException on the ExclusiveStartKey).
func TestForgedCursor(t *testing.T) {
	s := newService(t)
	s.setup(t)
	s.toUsers(t, "one", "", "u1")
	s.toUsers(t, "two", "", "u1")
	cfg, err := stak.ConfigFromEnv(func(k string) string { return map[string]string{stakcontract.EnvTable: s.Table}[k] })
	require.NoError(t, err, "config")
	codec := ddb.NewCursorCodec(cfg.CursorKey)
	type position struct {
		User   string `json:"u"`
		Public string `json:"g"`
	}
	forge := func(scope string, p position) string {
		tok, err := ddb.EncodeCursor(codec, scope, p)
		require.NoError(t, err, "encode cursor")
		return tok
	}
	const feed = "stak/feed/acme#main#u1"
	const readAll = "stak/read-all/acme#main#u1"
	for _, tt := range []struct {
		name, method, path, body string
	}{
		{"feed user position outside m#", stakcontract.Feed.Method, stakcontract.Feed.URL("acme", "main", "u1") + "?cursor=" + forge(feed, position{User: "zzz"}), ""},
		{"feed public position outside m#", stakcontract.Feed.Method, stakcontract.Feed.URL("acme", "main", "u1") + "?cursor=" + forge(feed, position{Public: "c#*"}), ""},
		{"feed position is the settings item", stakcontract.Feed.Method, stakcontract.Feed.URL("acme", "main", "u1") + "?cursor=" + forge(feed, position{User: "st#tenant_settings"}), ""},
		{"read-all position outside m#", stakcontract.ReadAll.Method, stakcontract.ReadAll.URL("acme", "main", "u1"), `{"cursor":"` + forge(readAll, position{User: "a", Public: "m#1"}) + `"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := s.Count(t)
			r := s.Do(t, tt.method, tt.path, tt.body)
			require.Equal(t, 400, r.Status, "status: %s", r.Body)
			assert.Equal(t, before, s.Count(t), "items: a refused request wrote")
		})
	}
	assert.Zero(t, s.stats(t, "u1").Read, "a refused read-all marked messages read")
}
