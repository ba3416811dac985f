// Command app is the CDK app that cdk.json runs: every stage of every
// service.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/stacks"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	if err := stacks.Build(app, config.Stages()); err != nil {
		fmt.Fprintf(os.Stderr, "dynastack: synth refused:\n%v\n", err)
		os.Exit(1)
	}
	// The Control Tower controls run inside the synth, as a validation
	// plugin, so cdk deploy is gated by them as well.
	root, err := config.RepoRoot()
	if err == nil {
		err = stacks.AddControls(app, stacks.ControlsPackage(root))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "dynastack: synth refused:\n%v\n", err)
		os.Exit(1)
	}
	asm := app.Synth(nil)
	errs := stacks.SynthErrors(asm)
	verrs, err := stacks.ValidationErrors(*asm.Directory())
	if err != nil {
		verrs = append(verrs, err.Error())
	}
	if errs = append(errs, verrs...); len(errs) > 0 {
		fmt.Fprintf(os.Stderr, "dynastack: synth refused, %d policy errors:\n", len(errs))
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, "  "+e)
		}
		os.Exit(1)
	}
}
