// Package contract is Stak's contract (design document 002,
// docs/schemas/stak.md): its table's names, its functions and its routes,
// declared once for the stacks and the Lambda code alike.
package contract

import "github.com/dynastack/dynastack/constructs/service"

// Names fixed by the design document.
const (
	Name          = "stak"
	TableBaseName = "stak-inbox"

	AttrPK = "pk"
	AttrSK = "sk"
	// AttrExpiredAt expires messages and read receipts (epoch seconds).
	AttrExpiredAt = "expiredat"

	// EnvTable carries the inbox table's physical name.
	EnvTable = "STAK_INBOX_TABLE"
)

// Inbox is the single table.
var Inbox = service.Table{BaseName: TableBaseName, Env: EnvTable}

// inbox is the path of one inbox of a tenant.
const inbox = "/tenants/{tenant}/inboxes/{inbox}"

// Publisher and operator routes (document 002: settings, inbox configs,
// publishing; the operators' recount), IAM-authorized: host systems sign
// with SigV4 and a host's role is granted its own tenant's paths only.
var (
	PutTenant = service.Route{Method: "PUT", Path: "/tenants/{tenant}/settings"}
	GetTenant = service.Route{Method: "GET", Path: "/tenants/{tenant}/settings"}
	PutInbox  = service.Route{Method: "PUT", Path: inbox}
	GetInbox  = service.Route{Method: "GET", Path: inbox}
	Publish   = service.Route{Method: "POST", Path: inbox + "/messages", Idempotent: true}
	// PublicStats are the inbox's public counters: broadcasts ever
	// published, expired and live.
	PublicStats = service.Route{Method: "GET", Path: inbox + "/stats"}
	// Recount is for operators only: outside /tenants/, so no tenant
	// grant reaches it.
	Recount = service.Route{Method: "POST", Path: "/admin" + inbox + "/recount"}
)

// End users' routes (feed, mark read, counters, mark all read),
// JWT-authorized: the handler serves a token only the paths of its own
// tenant claim and subject.
var (
	Feed     = service.Route{Method: "GET", Path: inbox + "/users/{uid}/messages", Auth: service.JWT, Query: []string{"limit", "cursor"}}
	MarkRead = service.Route{Method: "POST", Path: inbox + "/users/{uid}/messages/{id}/read", Auth: service.JWT}
	Stats    = service.Route{Method: "GET", Path: inbox + "/users/{uid}/stats", Auth: service.JWT}
	ReadAll  = service.Route{Method: "POST", Path: inbox + "/users/{uid}/read-all", Auth: service.JWT}
)

// The functions.
var (
	API = service.Function{
		Name: Name, Kind: service.HTTP, Description: "Stak inbox API",
		Routes: []service.Route{PutTenant, GetTenant, PutInbox, GetInbox, Publish, PublicStats, Recount, Feed, MarkRead, Stats, ReadAll},
	}
	// StreamConsumer keeps the counters when messages and read receipts
	// expire.
	StreamConsumer = service.Function{
		Name: "stak-stream", Kind: service.Stream,
		Description: "Stak counters from expired messages and read receipts",
	}
)

// Service is the whole contract.
var Service = service.Contract{
	Name: Name, Description: "Stak notification inbox (document 002)",
	Tables:    []service.Table{Inbox},
	Functions: []service.Function{API, StreamConsumer},
}
