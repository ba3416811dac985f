// Package contract is the ITSM ticket PoC's contract (design document 003,
// docs/schemas/itsm.md): its table's names, its function and its routes,
// declared once for the stacks and the Lambda code alike.
package contract

import "github.com/dynastack/dynastack/constructs/service"

// Names fixed by the design document.
const (
	Name          = "itsm"
	TableBaseName = "poc-itsm-tickets"

	AttrTicketID  = "ticket_id"
	AttrCallerID  = "caller_id"
	AttrCreatedAt = "created_at"
	// The other attributes of a ticket the code names (in expressions
	// and its listing's projection).
	AttrIssueDescription = "issue_description"
	AttrStatus           = "status"
	AttrUpdatedAt        = "updated_at"
	// AttrComments is the list of comments; AttrCommentTokens the set of
	// the tokens of the comments added, which tells a retried append from
	// a new one.
	AttrComments      = "comments"
	AttrCommentTokens = "comment_tokens"
	// AttrWriteToken is the token of the last status change, which tells a
	// retried change from another request's.
	AttrWriteToken = "write_token"
	// AttrExpiresAt expires the API's idempotency records (epoch seconds).
	// Document 003 expires nothing and no ticket carries it: TTL is on so
	// that a retried create's record goes after its 24-hour window instead
	// of staying forever (docs/schemas/itsm.md, decisions).
	AttrExpiresAt = "expires_at"

	// IndexCallerID lists a caller's tickets by creation time.
	IndexCallerID = "CallerIdIndex"

	// PrefixCallerSession and PrefixCallerHash begin the only two forms a
	// caller_id (the partition key of CallerIdIndex) may take: a session
	// id, or a phone number hashed with the desk's pepper
	// (CallerIDFromPhone). Design document 003 forbids personal data there;
	// anything else, a raw phone number above all, is a 400 (CheckCallerID).
	PrefixCallerSession = "sess-"
	PrefixCallerHash    = "hmac-sha256:"

	// EnvTable carries the tickets table's physical name.
	EnvTable = "ITSM_TICKETS_TABLE"
)

// Parameters of the routes.
const (
	// ParamID is a ticket's id, a UUID.
	ParamID service.PathParam = "id"
	// ParamCaller names the caller whose tickets ListTickets lists.
	ParamCaller service.QueryParam = "caller"
)

// Tickets is the tickets table.
var Tickets = service.Table{BaseName: TableBaseName, Env: EnvTable}

// The API's routes: document 003 plus the status change that "get ticket
// status" implies.
var (
	CreateTicket = service.Route{Operation: "createTicket", Method: "POST", Path: "/tickets", Idempotent: true}
	ListTickets  = service.Route{Operation: "listTickets", Method: "GET", Path: "/tickets", Query: []service.QueryParam{ParamCaller, service.Cursor}}
	GetTicket    = service.Route{Operation: "getTicket", Method: "GET", Path: "/tickets/{id}"}
	SetStatus    = service.Route{Operation: "setStatus", Method: "PATCH", Path: "/tickets/{id}"}
	AddComment   = service.Route{Operation: "addComment", Method: "POST", Path: "/tickets/{id}/comments"}
)

// API is the tickets API function.
var API = service.Function{
	Name: Name, Kind: service.HTTP, Description: "ITSM tickets API",
	Routes:  []service.Route{CreateTicket, ListTickets, GetTicket, SetStatus, AddComment},
	Metrics: []service.Metric{TicketStatusChanges, TicketComments},
}

// The ticket statuses (document 003), in lifecycle order.
const (
	StatusOpen       = "open"
	StatusInProgress = "in_progress"
	StatusResolved   = "resolved"
	StatusClosed     = "closed"
)

// DimTo is the status a ticket moved to (a new ticket moves to open).
const DimTo = "to"

// ITSM's metrics.
var (
	TicketStatusChanges = service.Metric{Name: "TicketStatusChanges", Unit: service.Count,
		Description: "tickets moved to a status (a new ticket: open)",
		Dimensions:  []service.Dimension{{Name: DimTo, Values: []string{StatusOpen, StatusInProgress, StatusResolved, StatusClosed}}}}
	TicketComments = service.Metric{Name: "TicketComments", Unit: service.Count,
		Description: "comments added to tickets"}
)

// Service is the whole contract.
var Service = service.Contract{
	Name: Name, Description: "ITSM ticket PoC (document 003)", APIVersion: "1.0.1",
	Tables: []service.Table{Tickets},
	Attributes: []string{AttrTicketID, AttrCallerID, AttrCreatedAt, AttrExpiresAt, AttrIssueDescription, AttrStatus,
		AttrUpdatedAt, AttrComments, AttrCommentTokens, AttrWriteToken},
	KeyParts:  []string{PrefixCallerSession, PrefixCallerHash},
	Functions: []service.Function{API},
}
