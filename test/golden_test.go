package test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("snapshots", rel)
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				golden, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("no snapshot for %s: run `make snapshots` and review the new file", rel)
				}
				if !bytes.Equal(golden, got) {
					t.Fatalf("%s differs from the synthesized template:\n%s\nIf the change is intended, run `make snapshots` and commit the file.", path, lineDiff(string(golden), string(got)))
				}
			})
		}
	}
	// A snapshot without a stack is a stack that was removed or renamed:
	// that must be as visible as a change.
	files, _ := filepath.Glob(filepath.Join("snapshots", "*", "*.template.json"))
	for _, f := range files {
		rel, _ := filepath.Rel("snapshots", f)
		if !want[rel] {
			if *update {
				if err := os.Remove(f); err != nil {
					t.Error(err)
				}
				continue
			}
			t.Errorf("snapshot %s has no stack any more: run `make snapshots` to delete it", f)
		}
	}
	if len(want) != 15 {
		t.Errorf("synthesized %d stacks, want 15 (5 services x 3 stages)", len(want))
	}
}

// lineDiff shows the first differing lines with context; enough to see what
// changed without a diff dependency.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	i := 0
	for i < len(al) && i < len(bl) && al[i] == bl[i] {
		i++
	}
	from := max(0, i-3)
	var out strings.Builder
	for j := from; j < i; j++ {
		out.WriteString("  " + al[j] + "\n")
	}
	for j := i; j < min(len(al), i+8); j++ {
		out.WriteString("- " + al[j] + "\n")
	}
	for j := i; j < min(len(bl), i+8); j++ {
		out.WriteString("+ " + bl[j] + "\n")
	}
	return out.String()
}
