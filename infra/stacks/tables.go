package stacks

import (
	"errors"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/agenticpm"
	"github.com/dynastack/dynastack/constructs/nucleus"
	"github.com/dynastack/dynastack/constructs/rezagent"
	"github.com/dynastack/dynastack/constructs/stak"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
)

// props returns the table props of one table in one stage.
func props(cfg config.Stage, service, id string) table.Props {
	return table.Props{Stage: cfg.Name, Overrides: cfg.Overrides(service, id)}
}

func buildRezAgent(stack awscdk.Stack, cfg config.Stage) error {
	_, err := rezagent.NewMessagesTable(stack, "Messages", rezagent.MessagesProps{
		Props:            props(cfg, rezagent.Service, "Messages"),
		MessageTypeIndex: cfg.RezAgentMessageTypeIndex,
	})
	return err
}

func buildNucleus(stack awscdk.Stack, cfg config.Stage) error {
	_, appErr := nucleus.NewAppTable(stack, "App", props(cfg, nucleus.Service, "App"))
	_, auditErr := nucleus.NewAuditTable(stack, "Audit", props(cfg, nucleus.Service, "Audit"))
	return errors.Join(appErr, auditErr)
}

func buildStak(stack awscdk.Stack, cfg config.Stage) error {
	_, err := stak.NewInboxTable(stack, "Inbox", props(cfg, stak.Service, "Inbox"))
	return err
}

func buildAgenticPM(stack awscdk.Stack, cfg config.Stage) error {
	_, err := agenticpm.NewTable(stack, "Table", props(cfg, agenticpm.Service, "Table"))
	return err
}
