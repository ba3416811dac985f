package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/itsm"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/infra/config"
)

func buildITSM(stack awscdk.Stack, cfg config.Stage) error {
	tickets, err := itsm.NewTicketsTable(stack, "Tickets", props(cfg, itsmcontract.Name, "Tickets"))
	if err != nil {
		return err
	}
	// Create, get, comment, status change and list by caller: reads and
	// writes on the table, queries on CallerIdIndex, nothing else.
	_, err = addAPI(stack, cfg, function{
		id: "Handler", fn: itsmcontract.API,
		tables: []access{{tickets, itsmcontract.EnvTable, exactly([]string{ddbGet, ddbPut, ddbUpdate}, itsmcontract.IndexCallerID)}},
	}, nil)
	return err
}
