package stacks

import (
	"errors"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/dynastack/dynastack/constructs/nucleus"
	"github.com/dynastack/dynastack/infra/config"
)

// NucleusRoutes is the Nucleus API (document 001: accounts, schedules and
// their targeted resources, and the audit log by entity and globally).
var NucleusRoutes = []Route{
	"POST /accounts",
	"GET /accounts",
	"GET /accounts/{id}",
	"PATCH /accounts/{id}",
	"GET /accounts/{id}/resources",
	"POST /schedules",
	"GET /schedules",
	"GET /schedules/{id}",
	"PATCH /schedules/{id}",
	"PUT /schedules/{id}/resources",
	"DELETE /schedules/{id}/resources/{arn+}",
	"POST /audit",
	"GET /audit",
	"GET /audit/global",
	"GET /audit/{entityType}/{id}",
}

func buildNucleus(stack awscdk.Stack, cfg config.Stage) error {
	app, appErr := nucleus.NewAppTable(stack, "App", props(cfg, nucleus.Service, "App"))
	audit, auditErr := nucleus.NewAuditTable(stack, "Audit", props(cfg, nucleus.Service, "Audit"))
	if err := errors.Join(appErr, auditErr); err != nil {
		return err
	}
	// Every change is written together with its audit entry, in one
	// transaction. The audit log is append-only: put and query, never
	// update or delete.
	_, err := addAPI(stack, cfg, function{
		id: "Handler", service: nucleus.Service, pkg: "./cmd/nucleus", description: "Nucleus accounts, schedules and audit API",
		tables: []access{
			{app, nucleus.EnvAppTableName, exactly([]string{ddbCheck, ddbDelete, ddbGet, ddbPut, ddbQuery, ddbUpdate}, nucleus.IndexGSI1)},
			{audit, nucleus.EnvAuditTableName, exactly([]string{ddbPut, ddbQuery}, nucleus.IndexGSI1)},
		},
	}, NucleusRoutes)
	return err
}
