package service_test

import (
	"fmt"

	"github.com/dynastack/dynastack/constructs/service"
)

// A client builds a route's URL from the contract's declaration, so
// renaming the route or one of its parameters breaks it at compile time.
func ExampleRoute_URL() {
	// As a contract declares them (constructs/itsm/contract).
	const paramCaller service.QueryParam = "caller"
	addComment := service.Route{Operation: "addComment", Method: "POST", Path: "/tickets/{id}/comments"}
	listTickets := service.Route{Operation: "listTickets", Method: "GET", Path: "/tickets", Query: []service.QueryParam{paramCaller, service.Cursor}}

	fmt.Println(addComment.Params())
	fmt.Println(addComment.Method, addComment.URL("3f1d7e3a-0000-4000-8000-000000000000"))
	fmt.Println(listTickets.Method, listTickets.URLQuery(service.Values{paramCaller: "poc-user-001", service.Cursor: ""}))
	// Output:
	// [id]
	// POST /tickets/3f1d7e3a-0000-4000-8000-000000000000/comments
	// GET /tickets?caller=poc-user-001
}
