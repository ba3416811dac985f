package test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/infra/stacks"
	"github.com/dynastack/dynastack/test/cdkapp"
)

var update = flag.Bool("update", false, "rewrite test/snapshots from the synthesized app (make snapshots)")

// TestGolden compares every stack of every stage with its reviewed snapshot.
// A schema change therefore always arrives in a pull request as a visible
// diff of test/snapshots/<stage>/<stack>.template.json.
func TestGolden(t *testing.T) {
	want := map[string]bool{}
	all := map[string]map[string]cdkapp.Template{stacks.BootstrapStage: asm.Bootstrap}
	for stage, t := range asm.Templates {
		all[stage] = t
	}
	for stage, stacks := range all {
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
	assert.Len(t, want, 16, "synthesized stacks (5 services x 3 stages, and the bootstrap stack of the stages' unpinned account)")
}
