package itsm

import (
	"net/http"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// Operations describes each route of the contract for its OpenAPI document
// (docs/api/itsm.openapi.json): the Go types its handler decodes and
// answers.
func Operations() []api.Operation {
	return []api.Operation{
		{Route: contract.CreateTicket, Summary: "Create a ticket",
			Body:    createRequest{},
			Example: createRequest{CallerID: "poc-user-001", IssueDescription: "VPN drops every few minutes"},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Ticket{}, Location: true}}},
		{Route: contract.ListTickets, Summary: "A caller's tickets, newest first, without comments",
			Query: map[service.QueryParam]api.Param{
				contract.ParamCaller: {Required: true, Description: "the caller whose tickets to list"},
				service.Cursor:       api.PageParams(PageSize, PageSize)[service.Cursor],
			},
			Answers: []api.Answer{{Status: http.StatusOK, Body: Page{}}}},
		{Route: contract.GetTicket, Summary: "A ticket with its comments", UUIDs: ticketIDs,
			Answers: []api.Answer{{Status: http.StatusOK, Body: Ticket{}}}},
		{Route: contract.SetStatus, Summary: "Move a ticket to another status", UUIDs: ticketIDs,
			Body: statusRequest{}, Example: statusRequest{Status: StatusInProgress},
			Answers: []api.Answer{{Status: http.StatusOK, Body: Ticket{}}}},
		{Route: contract.AddComment, Summary: "Add a comment to a ticket", UUIDs: ticketIDs,
			Body: commentRequest{}, Example: commentRequest{CommentText: "Restarted the client, still drops"},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Ticket{}}}},
	}
}

var ticketIDs = []service.PathParam{contract.ParamID}
