// Command snapshot writes the templates of a cloud assembly (cdk.out) in the
// golden layout, normalized like test/snapshots, so a plain `diff -ru`
// shows what a synth would change.
//
//	go run ./test/cmd/snapshot -assembly cdk.out -out /tmp/x
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dynastack/dynastack/test/cdkapp"
)

func main() {
	assembly := flag.String("assembly", "cdk.out", "cloud assembly directory")
	out := flag.String("out", "", "directory to write <stage>/<stack>.template.json into (required)")
	stage := flag.String("stage", "", "only this stage")
	flag.Parse()
	if err := run(*assembly, *out, *stage); err != nil {
		fmt.Fprintln(os.Stderr, "snapshot:", err)
		os.Exit(2)
	}
}

func run(assembly, out, only string) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	asm, err := cdkapp.Read(assembly)
	if err != nil {
		return fmt.Errorf("%s: %w (run `make synth` first)", assembly, err)
	}
	for stage, stacks := range asm.Templates {
		if only != "" && stage != only {
			continue
		}
		for id, tmpl := range stacks {
			b, err := cdkapp.Normalize(tmpl)
			if err != nil {
				return err
			}
			path := filepath.Join(out, stage, id+".template.json")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
