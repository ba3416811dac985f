package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/itsm"
	"github.com/dynastack/dynastack/infra/config"
)

// ITSMRoutes is the ITSM API surface (document 003 plus the status change
// that "get ticket status" implies).
var ITSMRoutes = []Route{
	"POST /tickets",
	"GET /tickets",
	"GET /tickets/{id}",
	"PATCH /tickets/{id}",
	"POST /tickets/{id}/comments",
}

func buildITSM(stack awscdk.Stack, cfg config.Stage) error {
	tickets, err := itsm.NewTicketsTable(stack, "Tickets", props(cfg, itsm.Service, "Tickets"))
	if err != nil {
		return err
	}
	// Create, get, comment, status change and list by caller: reads and
	// writes on the table, queries on CallerIdIndex, nothing else.
	_, err = addAPI(stack, cfg, function{
		id: "Handler", service: itsm.Service, pkg: "./cmd/itsm", description: "ITSM tickets API",
		tables: []access{{tickets, itsm.EnvTableName, exactly([]string{ddbGet, ddbPut, ddbUpdate}, itsm.IndexCallerID)}},
	}, ITSMRoutes)
	return err
}
