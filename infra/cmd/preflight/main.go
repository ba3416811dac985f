// Command preflight refuses a deploy of a stage whose settings are still
// placeholders or missing (infra/config.Stage.DeployProblems), as the app
// does when it runs for a cdk deploy: a deploy of an already synthesized
// assembly (cdk deploy --app <dir>, the deploy workflow) runs no app, so
// it runs this first. Exit 1 with one line per problem, 2 on bad usage.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/synth"
)

func main() {
	stage := flag.String("stage", "", "the stage about to be deployed")
	flag.Parse()
	if _, err := config.Lookup(*stage); err != nil {
		fmt.Fprintln(os.Stderr, "preflight:", err)
		os.Exit(2)
	}
	if err := synth.Preflight(config.Stages(), []string{*stage}); err != nil {
		fmt.Fprintf(os.Stderr, "preflight: deploy of %s refused, settings still placeholders or missing (docs/stage-policy.md, \"Deploy preflight\"):\n%v\n", *stage, err)
		os.Exit(1)
	}
	fmt.Printf("preflight: %s is ready to deploy\n", *stage)
}
