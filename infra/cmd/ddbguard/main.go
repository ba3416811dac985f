// Command ddbguard reports DynamoDB changes between two sets of
// CloudFormation templates that CloudFormation rejects or that hurt the live
// table, so that a reviewer sees them before merge.
//
//	go run ./infra/cmd/ddbguard [flags] OLD NEW
//
// OLD and NEW are template files or directories (golden layout
// <dir>/<stage>/<stack>.template.json, or a cdk.out cloud assembly). Exit
// status: 0 no unacknowledged hazard, 1 unacknowledged hazards, 2 malformed
// input or usage. See docs/reviewing-changes.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dynastack/dynastack/infra/ddbguard"
)

const (
	exitOK      = 0
	exitHazard  = 1
	exitInvalid = 2
)

// defaultAckFile is the reviewed acknowledgement file, read when it exists
// and no --ack is given. A variable so that tests do not pick up the
// repository's real file.
var defaultAckFile = func() string {
	return filepath.Join(repoRoot(), "infra", "ddbguard.ack.json")
}

// repoRoot is the folder holding go.work above the working directory, or the
// working directory itself: `make guard` runs at the root, but a developer
// may run the command from anywhere in the repository.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type ackFlags []ddbguard.Ack

func (a *ackFlags) String() string { return fmt.Sprint(len(*a)) }

func (a *ackFlags) Set(s string) error {
	ack, err := ddbguard.ParseAck(s)
	if err != nil {
		// flag prints "invalid value ... for flag": drop the sentinel's
		// prefix, which says nothing there.
		return errors.New(strings.TrimPrefix(err.Error(), ddbguard.ErrMalformed.Error()+": "))
	}
	*a = append(*a, ack)
	return nil
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ddbguard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ackFile := fs.String("ack", "", "reviewed acknowledgement `file` (default infra/ddbguard.ack.json when it exists)")
	stage := fs.String("stage", "", "`stage` of two single template files (default: from their aws:cdk:path metadata)")
	var acks ackFlags
	fs.Var(&acks, "ack-hazard", "acknowledge one hazard: `stage/stack/logicalId/class=reason` (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ddbguard [flags] OLD NEW")
		fmt.Fprintln(stderr, "OLD and NEW: template files, golden dirs (<dir>/<stage>/<stack>.template.json) or cdk.out cloud assemblies.")
		fmt.Fprintln(stderr, "exit 0: no unacknowledged hazard; 1: hazards; 2: malformed input or usage.")
		fs.PrintDefaults()
	}

	// flag stops at the first operand; keep parsing so that flags may
	// follow OLD and NEW.
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitInvalid
		}
		if fs.NArg() == 0 {
			break
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(operands) != 2 {
		fmt.Fprintf(stderr, "ddbguard: want OLD and NEW, got %d operands\n", len(operands))
		fs.Usage()
		return exitInvalid
	}

	fail := func(err error) int {
		fmt.Fprintln(stderr, "ddbguard:", err)
		return exitInvalid
	}
	old, err := ddbguard.Load(operands[0])
	if err != nil {
		return fail(err)
	}
	cur, err := ddbguard.Load(operands[1])
	if err != nil {
		return fail(err)
	}
	if err := ddbguard.Compatible(old, cur); err != nil {
		return fail(err)
	}
	if *stage != "" {
		if old.Layout != ddbguard.LayoutFile {
			return fail(fmt.Errorf("%w: --stage applies to two single files; directories name their stages", ddbguard.ErrMalformed))
		}
		for _, t := range append(old.Templates, cur.Templates...) {
			t.Stage = *stage
		}
	}

	all := []ddbguard.Ack(acks)
	path := *ackFile
	if path == "" {
		if p := defaultAckFile(); fileExists(p) {
			path = p
		}
	}
	if path != "" {
		fileAcks, err := ddbguard.LoadAcks(path)
		if err != nil {
			return fail(err)
		}
		// Flags come first: a reason given on the command line is the more
		// specific one.
		all = append(all, fileAcks...)
	}

	report := ddbguard.Compare(old, cur)
	outcome := report.Acknowledge(all)
	for _, h := range outcome.Open {
		fmt.Fprintln(stdout, "HAZARD", h)
	}
	for _, a := range outcome.Acked {
		fmt.Fprintln(stdout, "ACKED", a)
	}
	for _, a := range outcome.Stale {
		fmt.Fprintf(stderr, "ddbguard: warning: stale acknowledgement %s (%s) matches no hazard; remove it once the change has shipped\n", a, a.Source)
	}
	summary := report.Summary()
	if n := len(outcome.Acked); n > 0 {
		summary = fmt.Sprintf("%d acknowledged %s, %s", n, plural(n, "hazard"), summary)
	}
	if outcome.Failed() {
		n := len(outcome.Open)
		fmt.Fprintf(stdout, "FAIL: %d unacknowledged %s; %s\n", n, plural(n, "hazard"), summary)
		fmt.Fprintln(stdout, "ship each hazard the safe way, or acknowledge it on purpose (--ack-hazard or infra/ddbguard.ack.json); see docs/reviewing-changes.md")
		return exitHazard
	}
	fmt.Fprintln(stdout, "ok:", summary)
	return exitOK
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
