// Command releasetag tags each released module's changelog version that has
// no tag yet at a commit (default HEAD), and pushes the tags with -push
// (.github/workflows/release.yml on every merge to main). A version whose
// tag names another commit fails with exit 1: released versions never move.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/release"
)

func main() {
	rev := flag.String("rev", "HEAD", "the commit to tag")
	push := flag.Bool("push", false, "push each new tag to origin")
	dry := flag.Bool("n", false, "print the decisions only; create no tag")
	flag.Parse()
	root, err := config.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "releasetag:", err)
		os.Exit(2)
	}
	g := release.Git{Dir: root}
	decisions, planErr := release.Plan(g, *rev)
	var lines []string
	if *dry {
		for _, d := range decisions {
			lines = append(lines, fmt.Sprintf("%s: %s %s (dry run)", d.Module, d.Action, d.Tag))
		}
	} else {
		lines, err = release.Apply(g, *rev, decisions, *push)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
	if planErr != nil || err != nil {
		for _, e := range []error{planErr, err} {
			if e != nil {
				fmt.Fprintln(os.Stderr, "releasetag:", e)
			}
		}
		os.Exit(1)
	}
}
