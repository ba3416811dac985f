package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/agenticpm"
	"github.com/dynastack/dynastack/infra/config"
)

// AgenticPMRoutes is the AgenticPM API (document 004: every primary and GSI1
// access pattern, and the writes that create those items).
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
	"PUT /projects/{id}/checkpoints/{integration}/{key}",
	"GET /projects/{id}/checkpoints/{integration}/{key}",
	"PUT /integrations/{name}",
	"GET /integrations/{name}",
	"PUT /agent/config/{key}",
	"GET /agent/config/{key}",
	"GET /agent/config",
}

func buildAgenticPM(stack awscdk.Stack, cfg config.Stage) error {
	tbl, err := agenticpm.NewTable(stack, "Table", props(cfg, agenticpm.Service, "Table"))
	if err != nil {
		return err
	}
	_, err = addAPI(stack, cfg, function{
		id: "Handler", service: agenticpm.Service, pkg: "./cmd/agenticpm", description: "AgenticPM projects, artefacts, events and escalations API",
		tables: []access{{tbl, agenticpm.EnvTableName, readWrite}},
	}, AgenticPMRoutes)
	return err
}
