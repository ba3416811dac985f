package bodyschema_test

import (
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/inittrace"
	"github.com/dynastack/dynastack/lambdas/platform/bodyschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLibraryInitAllocatesNothing: the library linked here is the patched
// copy (lambdas/third_party/jsonschema), whose package initialisation
// leaves the drafts' metaschemas to the first Compile. Upstream's compiles
// them in init: 4–6 ms, 1.7 MB in 21,000 allocations at every start of
// Stak's and AgenticPM's APIs. This test binary is started again with
// inittrace, running no test, and the library's line is read.
func TestLibraryInitAllocatesNothing(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lib, ok := inittrace.Find(inittrace.Parse(out), "github.com/santhosh-tekuri/jsonschema/v6")
	require.True(t, ok, "no inittrace line for the library in:\n%s", out)
	// The patched copy: about 9.5 KB in 160 allocations (its Draft
	// values); upstream's: 1.7 MB in 21,000.
	const why = "the library's init (%s): is lambdas/go.mod's replace of github.com/santhosh-tekuri/jsonschema/v6 with third_party/jsonschema gone, or its patch (dynastack.patch) undone?"
	assert.LessOrEqual(t, lib.Bytes, 64<<10, "bytes allocated by "+why, lib.Clock)
	assert.LessOrEqual(t, lib.Allocs, 1000, "allocations by "+why, lib.Clock)
}

// TestConcurrentFirstCompiles: the first compiles of a start, from several
// requests at once, wait for the one load of the metaschemas and all
// validate as they would one at a time (go test -race sees the drafts'
// writes ordered before their readers). Run in a fresh process, so that
// these compiles are its first.
func TestConcurrentFirstCompiles(t *testing.T) {
	if os.Getenv("JSONSCHEMA_FIRST_COMPILES") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentFirstCompiles$", "-test.v")
		cmd.Env = append(os.Environ(), "JSONSCHEMA_FIRST_COMPILES=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			_, err := bodyschema.Compile([]byte(order))
			errs <- err
			_, err = bodyschema.Compile([]byte(`{"type": "object", "minProperties": "one"}`))
			assert.Error(t, err, "a schema invalid against the 2020-12 metaschema compiled")
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}
