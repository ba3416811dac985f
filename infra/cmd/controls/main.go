// Command controls runs AWS Control Tower's proactive controls (cfn-guard)
// over every template under the given directories — a cloud assembly or
// the golden files — and fails on a finding that infra/controls does not
// suppress, or on a suppression that no longer covers anything.
//
//	go run ./infra/cmd/controls cdk.out
//	go run ./infra/cmd/controls test/snapshots
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/dynastack/dynastack/infra/controls"
)

func main() {
	pkg := flag.String("package", "node_modules/@cdklabs/cdk-validator-cfnguard", "installed npm package with the cfn-guard binary and Control Tower rules")
	own := flag.String("rules", "infra/controls/rules", "dynastack's own rules")
	verbose := flag.Bool("v", false, "list every suppressed finding")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: controls [-package dir] [-rules dir] <cdk.out or test/snapshots>...")
		os.Exit(2)
	}
	if err := run(*pkg, *own, *verbose, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(pkg, own string, verbose bool, dirs []string) error {
	binary, rules, err := controls.Guard(pkg)
	if err != nil {
		return err
	}
	var templates []controls.Template
	for _, d := range dirs {
		t, err := controls.Templates(d)
		if err != nil {
			return err
		}
		templates = append(templates, t...)
	}
	rep, err := controls.Run(binary, []string{rules, own}, templates)
	if err != nil {
		return err
	}
	open, unused := controls.Suppressed(rep.Findings, controls.Suppressions)
	if verbose {
		for _, f := range rep.Findings {
			fmt.Println("suppressed", f)
		}
	}
	for _, f := range open {
		fmt.Println("FINDING", f)
	}
	for _, s := range unused {
		fmt.Printf("UNUSED suppression %s on %s: it covers no finding; remove it from infra/controls/suppressions.go\n", s.Control, s.Type)
	}
	fmt.Printf("controls: %d templates, %d controls applied (%s); %d findings, %d suppressed with a reason (infra/controls/suppressions.go)\n",
		len(templates), len(rep.Ran), strings.Join(rep.Ran, " "), len(rep.Findings), len(rep.Findings)-len(open))
	if len(open) > 0 || len(unused) > 0 {
		return fmt.Errorf("controls: %d open findings, %d unused suppressions: fix the resource, or suppress the control with a reason in infra/controls/suppressions.go", len(open), len(unused))
	}
	return nil
}
