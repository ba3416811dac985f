package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/poller"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStreamSourceFollowsTheMapping: the local poller is configured from
// the synthesized event source mapping of Stak's consumer, retry, bisect,
// age and on-failure settings included, so a change to the stack changes
// what make dev does.
func TestStreamSourceFollowsTheMapping(t *testing.T) {
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", "stak"))
	require.NoError(t, err)
	fns, err := tmpl.Functions()
	require.NoError(t, err)
	var consumer *cfntables.Function
	for i, fn := range fns {
		if fn.Service() == "stak-stream" {
			consumer = &fns[i]
		}
	}
	require.NotNil(t, consumer, "no stak-stream function in the dev template")
	names := map[string]string{}
	for _, tb := range mustTables(t, tmpl) {
		names[tb.LogicalID] = tb.Name
	}
	src, err := sourceOf(context.Background(), tmpl, *consumer, names, nil)
	require.NoError(t, err)
	assert.Equal(t, poller.Latest, src.start, "stream source: start")
	assert.EqualValues(t, 100, src.batch, "stream source: batch size")
	assert.True(t, src.bisect, "stream source: bisect")
	assert.EqualValues(t, 10, src.retries, "stream source: retries")
	assert.Equal(t, 6*time.Hour, src.maxAge, "stream source: max record age")
	assert.True(t, strings.HasPrefix(src.onFailure, "StreamFailures"), "stream source: on-failure destination %q", src.onFailure)
	assert.Len(t, src.filters, 1, "stream source: filters")
}

func mustTables(t *testing.T, tmpl *cfntables.Template) []cfntables.Table {
	t.Helper()
	tables, err := tmpl.Tables()
	require.NoError(t, err)
	return tables
}
