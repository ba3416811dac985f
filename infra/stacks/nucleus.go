package stacks

import (
	"errors"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/nucleus"
	"github.com/dynastack/dynastack/infra/config"
)

func buildNucleus(stack awscdk.Stack, cfg config.Stage) error {
	_, appErr := nucleus.NewAppTable(stack, "App", props(cfg, nucleus.Service, "App"))
	_, auditErr := nucleus.NewAuditTable(stack, "Audit", props(cfg, nucleus.Service, "Audit"))
	return errors.Join(appErr, auditErr)
}
