package stak

import (
	"net/http"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// Operations describes each route of the contract for its OpenAPI document
// (docs/api/stak.openapi.json): the Go types its handler decodes and
// answers.
func Operations() []api.Operation {
	return []api.Operation{
		{Route: contract.PutTenant, Summary: "Create or replace a tenant's settings", Body: tenantRequest{},
			Example: tenantRequest{Title: "Acme", TTL: "720h"},
			Answers: []api.Answer{{Status: http.StatusOK, Body: TenantSettings{}}}},
		{Route: contract.GetTenant, Summary: "A tenant's settings",
			Answers: []api.Answer{{Status: http.StatusOK, Body: TenantSettings{}}}},
		{Route: contract.PutInbox, Summary: "Create or replace an inbox (title, TTLs by kind, JSON Schemas of message bodies)", Body: inboxRequest{},
			Answers: []api.Answer{{Status: http.StatusOK, Body: InboxConfig{}}}},
		{Route: contract.GetInbox, Summary: "An inbox's configuration",
			Answers: []api.Answer{{Status: http.StatusOK, Body: InboxConfig{}}}},
		{Route: contract.Publish, Summary: "Publish a message to an inbox's audiences", Body: publishRequest{},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Published{}}}},
		{Route: contract.PublicStats, Summary: "An inbox's public message counts",
			Answers: []api.Answer{{Status: http.StatusOK, Body: PublicStats{}}}},
		{Route: contract.Recount, Summary: "Recount a user's counters from the messages (an operator's repair)", Body: recountRequest{},
			Answers: []api.Answer{{Status: http.StatusOK, Body: Recount{}}}},
		{Route: contract.Feed, Summary: "An end user's messages, newest first", Query: api.PageParams(DefaultPageSize, MaxPageSize),
			Answers: []api.Answer{{Status: http.StatusOK, Body: Page{}}}},
		{Route: contract.MarkRead, Summary: "Mark one of the user's messages read",
			Answers: []api.Answer{{Status: http.StatusOK, Body: ReadResult{}}}},
		{Route: contract.Stats, Summary: "The user's message counts",
			Answers: []api.Answer{{Status: http.StatusOK, Body: Stats{}}}},
		{Route: contract.ReadAll, Summary: "Mark the user's messages read up to a bound, a batch at a time (the answer's cursor continues)", Body: readAllRequest{},
			Answers: []api.Answer{{Status: http.StatusOK, Body: ReadAll{}}}},
	}
}
