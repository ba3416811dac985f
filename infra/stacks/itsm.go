package stacks

import (
	"maps"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/gofunction"
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

// ServiceEnv names the service a function serves; the local runner reads it
// from the synthesized template to wire the same code to the same tables.
const ServiceEnv = "DYNASTACK_SERVICE"

func buildITSM(stack awscdk.Stack, cfg config.Stage) error {
	tickets, err := itsm.NewTicketsTable(stack, "Tickets", props(cfg, itsm.Service, "Tickets"))
	if err != nil {
		return err
	}
	lambdas, err := config.LambdasDir()
	if err != nil {
		return err
	}
	env := map[string]*string{ServiceEnv: jsii.String(itsm.Service)}
	maps.Copy(env, tickets.Environment(itsm.EnvTableName))
	fn, err := gofunction.New(stack, "Handler", gofunction.Props{
		Stage:       cfg.Name,
		ModuleDir:   lambdas,
		Package:     "./cmd/itsm",
		Environment: env,
		Description: "ITSM tickets API",
	})
	if err != nil {
		return err
	}
	// Create, get, comment, status change and list by caller: reads and
	// writes on the table, queries on CallerIdIndex, nothing else.
	tickets.GrantReadWrite(fn.Function)
	suppressAPIFunction(fn)
	_, err = newHTTPAPI(stack, itsm.Service, cfg, fn.Function, ITSMRoutes)
	return err
}
