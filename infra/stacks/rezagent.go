package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/rezagent"
	"github.com/dynastack/dynastack/infra/config"
)

// RezAgentRoutes is the rez_agent messages API (document 000: get by id,
// list by stage or status, status updates, metrics).
var RezAgentRoutes = []Route{
	"POST /messages",
	"GET /messages",
	"GET /messages/{id}",
	"PATCH /messages/{id}",
	"GET /metrics",
}

func buildRezAgent(stack awscdk.Stack, cfg config.Stage) error {
	messages, err := rezagent.NewMessagesTable(stack, "Messages", rezagent.MessagesProps{
		Props:            props(cfg, rezagent.Service, "Messages"),
		MessageTypeIndex: cfg.RezAgentMessageTypeIndex,
	})
	if err != nil {
		return err
	}
	_, err = addAPI(stack, cfg, function{
		id: "Handler", service: rezagent.Service, pkg: "./cmd/rezagent", description: "rez_agent messages API",
		tables: []access{{messages, rezagent.EnvTableName, readWrite}},
	}, RezAgentRoutes)
	return err
}
