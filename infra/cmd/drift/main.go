// Command drift reads `cdk drift` output on stdin (make drift, the drift
// workflow), prints one line per stack with its table findings, and with
// -issues <dir> writes one Markdown file per drifted stack (first line the
// issue title, then a blank line, then the body). It exits 1 when a stack
// drifted, 0 when none did, 2 when the output names no stack (the CLI
// failed before checking any).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynastack/dynastack/infra/drift"
)

func main() {
	issues := flag.String("issues", "", "write one issue file per drifted stack into this directory")
	run := flag.String("run", "", "the URL of the run, linked from each issue")
	flag.Parse()
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "drift:", err)
		os.Exit(2)
	}
	os.Exit(report(string(raw), *issues, *run, os.Stdout, os.Stderr))
}

func report(out, issues, run string, stdout, stderr io.Writer) int {
	stacks := drift.Parse(out)
	if len(stacks) == 0 {
		fmt.Fprintln(stderr, "drift: the cdk drift output names no stack (did the CLI fail before checking any?)")
		return 2
	}
	for _, l := range drift.Summary(stacks) {
		fmt.Fprintln(stdout, l)
	}
	code := 0
	for _, s := range stacks {
		if !s.Drifted() {
			continue
		}
		code = 1
		if issues == "" {
			continue
		}
		if err := os.MkdirAll(issues, 0o755); err != nil {
			fmt.Fprintln(stderr, "drift:", err)
			return 2
		}
		file := filepath.Join(issues, strings.ReplaceAll(s.Name, "/", "-")+".md")
		if err := os.WriteFile(file, []byte(drift.Title(s.Name)+"\n\n"+drift.Issue(s, run)), 0o644); err != nil {
			fmt.Fprintln(stderr, "drift:", err)
			return 2
		}
	}
	return code
}
