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
	if errs := stacks.SynthErrors(app.Synth(nil)); len(errs) > 0 {
		fmt.Fprintf(os.Stderr, "dynastack: synth refused, %d policy errors:\n", len(errs))
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, "  "+e)
		}
		os.Exit(1)
	}
}
