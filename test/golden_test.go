package test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/stacks"
	"github.com/dynastack/dynastack/test/cdkapp"
)

var update = flag.Bool("update", false, "rewrite test/snapshots from the synthesized app (make snapshots)")

// TestGolden compares every stack of every stage with its reviewed snapshot.
// A schema change therefore always arrives in a pull request as a visible
// diff of test/snapshots/<stage>/<stack>.template.json.
func TestGolden(t *testing.T) {
	want := map[string]bool{}
	for stage, stacks := range asm.Templates {
		for stack, tmpl := range stacks {
			rel := filepath.Join(stage, stack+".template.json")
			want[rel] = true
			t.Run(stage+"/"+stack, func(t *testing.T) {
				got, err := cdkapp.Normalize(tmpl)
				require.NoError(t, err)
				path := filepath.Join("snapshots", rel)
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
					require.NoError(t, os.WriteFile(path, got, 0o644))
					return
				}
				golden, err := os.ReadFile(path)
				require.NoError(t, err, "no snapshot for %s: run `make snapshots` and review the new file", rel)
				// Byte for byte: the strings are the files' bytes, and
				// testify prints a line diff of strings.
				require.Equal(t, string(golden), string(got), "%s differs from the synthesized template: if the change is intended, run `make snapshots` and commit the file", path)
			})
		}
	}
	// A snapshot without a stack is a stack that was removed or renamed:
	// that must be as visible as a change.
	files, _ := filepath.Glob(filepath.Join("snapshots", "*", "*.template.json"))
	for _, f := range files {
		rel, _ := filepath.Rel("snapshots", f)
		if *update {
			if !want[rel] {
				assert.NoError(t, os.Remove(f))
			}
			continue
		}
		assert.True(t, want[rel], "snapshot %s has no stack any more: run `make snapshots` to delete it", f)
	}
	assert.Len(t, want, 15, "synthesized stacks (5 services x 3 stages)")
}

// TestGoldenBootstrap compares each bootstrap stack (stacks.NewBootstrap)
// with test/bootstrap-snapshots/<account>.template.json: kept beside, not
// inside, test/snapshots, whose folders are the stages (make diff, guard,
// adopt).
func TestGoldenBootstrap(t *testing.T) {
	want := map[string]bool{}
	for id, tmpl := range asm.Bootstrap {
		path := filepath.Join(bootstrapSnapshots, id+".template.json")
		want[path] = true
		got, err := cdkapp.Normalize(tmpl)
		require.NoError(t, err)
		if *update {
			require.NoError(t, os.MkdirAll(bootstrapSnapshots, 0o755))
			require.NoError(t, os.WriteFile(path, got, 0o644))
			continue
		}
		golden, err := os.ReadFile(path)
		require.NoError(t, err, "no snapshot for bootstrap/%s: run `make snapshots` and review the new file", id)
		require.Equal(t, string(golden), string(got), "%s differs from the synthesized template: if the change is intended, run `make snapshots` and commit the file", path)
	}
	files, _ := filepath.Glob(filepath.Join(bootstrapSnapshots, "*.template.json"))
	for _, f := range files {
		if *update && !want[f] {
			assert.NoError(t, os.Remove(f))
			continue
		}
		assert.True(t, want[f], "snapshot %s has no stack any more: run `make snapshots` to delete it", f)
	}
	assert.Len(t, want, 1, "bootstrap stacks: one, of the stages' unpinned account (%s)", stacks.BootstrapStage+"/"+config.DefaultBootstrapAccount)
}

// bootstrapSnapshots holds the bootstrap stacks' golden files.
const bootstrapSnapshots = "bootstrap-snapshots"
