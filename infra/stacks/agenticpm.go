package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/agenticpm"
	"github.com/dynastack/dynastack/infra/config"
)

// AgenticPMRoutes is the AgenticPM API (document 004: every primary and GSI1
// access pattern, and the writes that create those items; the hold queue's
// list, release and cancel).
var AgenticPMRoutes = []Route{
	"POST /projects",
	"GET /projects",
	"GET /projects/{id}",
	"PATCH /projects/{id}",
	"GET /projects/{id}/artefacts",
	"GET /projects/{id}/artefacts/{type}",
	"PUT /projects/{id}/artefacts/{type}",
	"POST /projects/{id}/events",
	"GET /projects/{id}/events",
	"POST /events",
	"GET /events",
	"POST /projects/{id}/escalations",
	"GET /projects/{id}/escalations",
	"POST /projects/{id}/escalations/{eid}/decision",
	"GET /escalations",
	"POST /projects/{id}/actions",
	"GET /projects/{id}/actions",
	"POST /projects/{id}/actions/{aid}/release",
	"POST /projects/{id}/actions/{aid}/cancel",
	"GET /actions/held",
	"PUT /projects/{id}/checkpoints/{integration}/{key}",
	"GET /projects/{id}/checkpoints/{integration}/{key}",
	"PUT /integrations/{name}",
	"GET /integrations/{name}",
	"PUT /agent/config/{key}",
	"GET /agent/config/{key}",
	"GET /agent/config",
}

// AgenticPMReleaseService is the DYNASTACK_SERVICE of the hold queue's
// release job (lambdas/services/agenticpm.ReleaseService).
const AgenticPMReleaseService = "agenticpm-release"

// agenticPMEventBusEnv names the bus for the API and the release job
// (lambdas/services/agenticpm.EnvEventBus).
const agenticPMEventBusEnv = "AGENTICPM_EVENT_BUS"

func buildAgenticPM(stack awscdk.Stack, cfg config.Stage) error {
	hold := cfg.AgenticPM.WithDefaults(string(cfg.Name))
	tbl, err := agenticpm.NewTable(stack, "Table", props(cfg, agenticpm.Service, "Table"))
	if err != nil {
		return err
	}
	// Released actions go to integrations through this bus; the name is
	// fixed per stage so the functions get it as a literal (the local
	// runner resolves no Ref but a table's).
	bus := awsevents.NewEventBus(stack, jsii.String("ActionBus"), &awsevents.EventBusProps{
		EventBusName: jsii.String(hold.EventBusName),
		Description:  jsii.String("AgenticPM: held agent actions released for integrations (AgentActionReleased)"),
	})
	busEnv := map[string]*string{agenticPMEventBusEnv: jsii.String(hold.EventBusName)}
	api, err := addAPI(stack, cfg, function{
		id: "Handler", service: agenticpm.Service, pkg: "./cmd/agenticpm", description: "AgenticPM projects, artefacts, events and escalations API",
		tables: []access{{tbl, agenticpm.EnvTableName, exactly([]string{ddbCheck, ddbGet, ddbPut, ddbQuery, ddbUpdate}, agenticpm.IndexGSI1)}},
		env:    busEnv,
	}, AgenticPMRoutes)
	if err != nil {
		return err
	}
	bus.GrantPutEventsTo(api.Function, nil)
	// The release job queries the hold queue and outbox on GSI1, releases
	// in a transaction (an Update and two event Puts) and moves outbox
	// leases with UpdateItem: nothing else.
	release, err := addScheduled(stack, cfg, function{
		id: "Release", service: AgenticPMReleaseService, pkg: "./cmd/agenticpm-release",
		description: "AgenticPM hold queue: releases due held actions and puts them on the bus",
		tables: []access{{tbl, agenticpm.EnvTableName, exactly(
			[]string{"dynamodb:PutItem", "dynamodb:UpdateItem"}, agenticpm.IndexGSI1)}},
		env: busEnv,
	}, hold.Release)
	if err != nil {
		return err
	}
	bus.GrantPutEventsTo(release.Function, nil)
	return nil
}
