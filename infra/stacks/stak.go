package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/stak"
	"github.com/dynastack/dynastack/infra/config"
)

func buildStak(stack awscdk.Stack, cfg config.Stage) error {
	_, err := stak.NewInboxTable(stack, "Inbox", props(cfg, stak.Service, "Inbox"))
	return err
}
