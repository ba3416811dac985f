// Command app is the CDK app that cdk.json runs: every stage of every
// service.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/stacks"
	"github.com/dynastack/dynastack/infra/synth"
)

func main() {
	// A synth is short and allocates mostly in the jsii runtime's JSON and
	// reflection, with a small live heap: collecting at 5× it instead of
	// 2× takes the collector off the path of every kernel round trip.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	times := newTimer(os.Getenv("DYNASTACK_SYNTH_TIMES") != "")
	// The Lambda bootstraps build while the stacks are constructed. Without
	// the lambdas folder the synth fails below, where the functions are added.
	if outdir := os.Getenv("CDK_OUTDIR"); outdir != "" {
		if lambdas, err := config.LambdasDir(); err == nil {
			gofunction.Prebuild(lambdas, outdir)
		}
	}
	defer jsii.Close()
	// CDK's CloudFormation validation runs as synth.AddChecks adds it.
	app := awscdk.NewApp(&awscdk.AppProps{BuiltinCloudFormationValidation: jsii.Bool(false)})
	times.mark("jsii kernel and app")
	// A deploy of a stage whose settings are still placeholders stops here,
	// before any stack exists, so the CLI never reaches CloudFormation.
	if err := preflight(app); err != nil {
		fmt.Fprintf(os.Stderr, "dynastack: deploy refused, settings still placeholders or missing (docs/stage-policy.md, \"Deploy preflight\"):\n%v\n", err)
		os.Exit(1)
	}
	if err := synth.RemoveStaleNagReports(app); err != nil {
		fmt.Fprintf(os.Stderr, "dynastack: %v\n", err)
		os.Exit(1)
	}
	if err := stacks.Build(app, config.Stages()); err != nil {
		fmt.Fprintf(os.Stderr, "dynastack: synth refused:\n%v\n", err)
		os.Exit(1)
	}
	times.mark("stacks built (Lambda bootstraps included)")
	root, err := config.RepoRoot()
	if err == nil {
		err = synth.AddChecks(app, root, func(check string, d time.Duration, n, total int) {
			times.part(fmt.Sprintf("of which %s (%d/%d templates)", check, n, total), d)
		})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "dynastack: synth refused:\n%v\n", err)
		os.Exit(1)
	}
	asm := app.Synth(nil)
	times.mark("synth (aspects, validation, controls, files)")
	times.print()
	if errs := synth.Failures(asm); len(errs) > 0 {
		fmt.Fprintf(os.Stderr, "dynastack: synth refused, %d policy errors:\n", len(errs))
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, "  "+e)
		}
		os.Exit(1)
	}
}

// preflight refuses a deploy (make deploy's context, or a cdk deploy among
// the app's ancestors) of a stage with placeholder settings.
func preflight(app awscdk.App) error {
	var names []string
	for _, s := range config.Stages() {
		names = append(names, string(s.Name))
	}
	value := ""
	if v := app.Node().TryGetContext(jsii.String(synth.DeployContext)); v != nil {
		value = fmt.Sprint(v)
	}
	var ancestors [][]string
	if value == "" {
		ancestors = synth.Ancestors()
	}
	deploying, err := synth.DeployingStages(value, ancestors, names)
	if err != nil {
		return err
	}
	return synth.Preflight(config.Stages(), deploying)
}

// timer collects where a synth's time goes, printed to stderr when on.
type timer struct {
	on      bool
	last    time.Time
	lines   []string
	pending []string // parts of the phase in progress
}

func newTimer(on bool) *timer { return &timer{on: on, last: time.Now()} }

// mark ends a phase.
func (t *timer) mark(phase string) {
	now := time.Now()
	t.lines = append(t.lines, fmt.Sprintf("%-58s %6.2fs", phase, now.Sub(t.last).Seconds()))
	t.lines = append(t.lines, t.pending...)
	t.pending, t.last = nil, now
}

// part records a part of the phase in progress.
func (t *timer) part(name string, d time.Duration) {
	t.pending = append(t.pending, fmt.Sprintf("  %-56s %6.2fs", name, d.Seconds()))
}

func (t *timer) print() {
	if t.on {
		fmt.Fprintln(os.Stderr, strings.Join(t.lines, "\n"))
	}
}
