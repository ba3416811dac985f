package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/itsm"
	"github.com/dynastack/dynastack/infra/config"
)

func buildITSM(stack awscdk.Stack, cfg config.Stage) error {
	_, err := itsm.NewTicketsTable(stack, "Tickets", props(cfg, itsm.Service, "Tickets"))
	return err
}
