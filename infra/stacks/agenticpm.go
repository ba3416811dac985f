package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/agenticpm"
	"github.com/dynastack/dynastack/infra/config"
)

func buildAgenticPM(stack awscdk.Stack, cfg config.Stage) error {
	_, err := agenticpm.NewTable(stack, "Table", props(cfg, agenticpm.Service, "Table"))
	return err
}
