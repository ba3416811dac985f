package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/poller"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
)

// TestStreamSourceFollowsTheMapping: the local poller is configured from
// the synthesized event source mapping of Stak's consumer, retry, bisect,
// age and on-failure settings included, so a change to the stack changes
// what make dev does.
func TestStreamSourceFollowsTheMapping(t *testing.T) {
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", "stak"))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	var consumer *cfntables.Function
	for i, fn := range fns {
		if fn.Service() == "stak-stream" {
			consumer = &fns[i]
		}
	}
	if consumer == nil {
		t.Fatal("no stak-stream function in the dev template")
	}
	names := map[string]string{}
	for _, tb := range mustTables(t, tmpl) {
		names[tb.LogicalID] = tb.Name
	}
	src, err := sourceOf(context.Background(), tmpl, *consumer, names, nil)
	if err != nil {
		t.Fatal(err)
	}
	if src.start != poller.Latest || src.batch != 100 || !src.bisect || src.retries != 10 || src.maxAge != 6*time.Hour ||
		!strings.HasPrefix(src.onFailure, "StreamFailures") || len(src.filters) != 1 {
		t.Errorf("stream source = %+v", src)
	}
}

func mustTables(t *testing.T, tmpl *cfntables.Template) []cfntables.Table {
	t.Helper()
	tables, err := tmpl.Tables()
	if err != nil {
		t.Fatal(err)
	}
	return tables
}
