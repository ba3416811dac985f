package itsm_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/dynastack/dynastack/lambdas/client/itsm"
)

// The README's example as code the compiler checks (an example without
// an Output comment is compiled, not run: it needs a deployed API).
func Example() {
	ctx := context.Background()
	baseURL := "https://abc123.execute-api.eu-central-1.amazonaws.com" // the stack's ApiUrl output
	signing := http.DefaultClient                                      // a client whose transport signs for execute-api
	c, err := itsm.NewClientWithResponses(baseURL, itsm.WithHTTPClient(signing))
	if err != nil {
		panic(err)
	}
	callerID, text := "sess-0b7c", "VPN drops every few minutes"
	key := "8a1f0d2e-2c7b-4c55-9b61-0b6f3f0e6a11" // the same key on a retry: the first answer again
	r, err := c.CreateTicketWithResponse(ctx, &itsm.CreateTicketParams{IdempotencyKey: &key},
		itsm.CreateTicketJSONRequestBody{CallerId: &callerID, IssueDescription: &text})
	if err != nil {
		panic(err) // no answer
	}
	switch r.StatusCode() {
	case http.StatusCreated:
		var ticket *itsm.Ticket = r.JSON201
		fmt.Println(ticket.TicketId, ticket.Status)
	case http.StatusServiceUnavailable:
		fmt.Println(r.JSON503.Error.Code, "retry after", *r.Headers503.RetryAfter, "s")
	default:
		fmt.Println(r.StatusCode(), string(r.Body))
	}
	next, err := c.ListTicketsWithResponse(ctx, &itsm.ListTicketsParams{Caller: callerID})
	if err == nil && next.StatusCode() == http.StatusOK && next.JSON200.Tickets != nil {
		fmt.Println(len(*next.JSON200.Tickets), "tickets")
	}
}
