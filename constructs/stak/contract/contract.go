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
	// AttrKind is an item's kind (tenant settings, inbox config, message,
	// counters, stream marker); a read receipt has none (decision 6).
	AttrKind = "kind"
	// AttrTenantKey, AttrInboxKey and AttrUID repeat a counter item's key
	// parts; AttrTaxonomy is an inbox config's categories.
	AttrTenantKey = "tenant_key"
	AttrInboxKey  = "inbox_key"
	AttrUID       = "uid"
	AttrTaxonomy  = "taxonomy"
	// AttrPublished, AttrRead and AttrExpired are a counter item's
	// counts; AttrReadAt is when a message was read (epoch seconds).
	AttrPublished = "published"
	AttrRead      = "read"
	AttrExpired   = "expired"
	AttrReadAt    = "readat"
	// AttrMessage is a message's content, a map whose AttrBody is the
	// body the inbox's schema checks.
	AttrMessage = "message"
	AttrBody    = "body"

	// EnvTable carries the inbox table's physical name.
	EnvTable = "STAK_INBOX_TABLE"
)

// Key values (docs/schemas/stak.md, "Items"): the prefixes of the
// partition and sort keys and the fixed values.
const (
	// PrefixTenant starts every partition key: TenantPK, UserPK, PublicPK.
	PrefixTenant = "t#"
	// PrefixUser and PrefixPublic follow the tenant in a message
	// partition, with no '#' between (decision 9): a user's partition,
	// or the inbox's public one, whose user part is PublicUID.
	PrefixUser   = "U#"
	PrefixPublic = "G#"
	// PublicUID is the user part of an inbox's public partition, which
	// no user id may be.
	PublicUID = "$public"
	// KeySettings is the sk of a tenant's settings.
	KeySettings = "st#tenant_settings"
	// PrefixInbox + inbox is the sk of an inbox config.
	PrefixInbox = "si#"
	// PrefixMessage + message id is the sk of a message and of a receipt.
	PrefixMessage = "m#"
	// PrefixStats + category is the sk of a partition's counters;
	// KeyStatsAll is the sk of its counters over every category.
	PrefixStats = "c#"
	KeyStatsAll = "c#*"
	// PrefixMarker + stream event id is the sk of a stream dedupe marker.
	PrefixMarker = "e#"
)

// TenantPK is the partition of a tenant's settings and inbox configs.
func TenantPK(tenant string) string { return PrefixTenant + tenant }

// UserPK is the partition of a user's messages in an inbox.
func UserPK(tenant, uid, inbox string) string {
	return PrefixTenant + tenant + PrefixUser + uid + "#" + inbox
}

// PublicPK is the partition of an inbox's public (everyone) messages.
func PublicPK(tenant, inbox string) string {
	return PrefixTenant + tenant + PrefixPublic + PublicUID + "#" + inbox
}

// Inbox is the single table.
var Inbox = service.Table{BaseName: TableBaseName, Env: EnvTable}

// Parameters of the routes: every one is a key part of the inbox table.
const (
	// ParamTenant is the tenant (the host system's tenant key).
	ParamTenant service.PathParam = "tenant"
	// ParamInbox is the inbox of the tenant.
	ParamInbox service.PathParam = "inbox"
	// ParamUID is the end user, whom a JWT's subject must name.
	ParamUID service.PathParam = "uid"
	// ParamID is a message's id.
	ParamID service.PathParam = "id"
)

// inbox is the path of one inbox of a tenant.
const inbox = "/tenants/{tenant}/inboxes/{inbox}"

// Publisher and operator routes (document 002: settings, inbox configs,
// publishing; the operators' recount), IAM-authorized: host systems sign
// with SigV4 and a host's role is granted its own tenant's paths only.
var (
	PutTenant = service.Route{Operation: "putTenant", Method: "PUT", Path: "/tenants/{tenant}/settings"}
	GetTenant = service.Route{Operation: "getTenant", Method: "GET", Path: "/tenants/{tenant}/settings"}
	PutInbox  = service.Route{Operation: "putInbox", Method: "PUT", Path: inbox}
	GetInbox  = service.Route{Operation: "getInbox", Method: "GET", Path: inbox}
	Publish   = service.Route{Operation: "publish", Method: "POST", Path: inbox + "/messages", Idempotent: true}
	// PublicStats are the inbox's public counters: broadcasts ever
	// published, expired and live.
	PublicStats = service.Route{Operation: "publicStats", Method: "GET", Path: inbox + "/stats"}
	// Recount is for operators only: outside /tenants/, so no tenant
	// grant reaches it.
	Recount = service.Route{Operation: "recount", Method: "POST", Path: "/admin" + inbox + "/recount"}
)

// End users' routes (feed, mark read, counters, mark all read),
// JWT-authorized: the handler serves a token only the paths of its own
// tenant claim and subject.
var (
	Feed     = service.Route{Operation: "feed", Method: "GET", Path: inbox + "/users/{uid}/messages", Auth: service.JWT, Query: []service.QueryParam{service.Limit, service.Cursor}}
	MarkRead = service.Route{Operation: "markRead", Method: "POST", Path: inbox + "/users/{uid}/messages/{id}/read", Auth: service.JWT}
	Stats    = service.Route{Operation: "stats", Method: "GET", Path: inbox + "/users/{uid}/stats", Auth: service.JWT}
	ReadAll  = service.Route{Operation: "readAll", Method: "POST", Path: inbox + "/users/{uid}/read-all", Auth: service.JWT}
)

// The functions.
var (
	API = service.Function{
		Name: Name, Kind: service.HTTP, Description: "Stak inbox API",
		Routes:  []service.Route{PutTenant, GetTenant, PutInbox, GetInbox, Publish, PublicStats, Recount, Feed, MarkRead, Stats, ReadAll},
		Metrics: []service.Metric{Publishes, FanOut, Reads, CounterRepairs},
	}
	// StreamConsumer keeps the counters when messages and read receipts
	// expire.
	StreamConsumer = service.Function{
		Name: "stak-stream", Kind: service.Stream,
		Description: "Stak counters from expired messages and read receipts",
		Metrics:     []service.Metric{Expiries},
	}
	// DriftCheck recounts a bounded sample of counters each hour, read
	// only, and reports those that drifted (docs/schemas/stak.md, "Drift
	// check"): the repair stays the operator's recount.
	DriftCheck = service.Function{
		Name: "stak-drift", Kind: service.Schedule,
		Description: "Stak: recounts a sample of counters read-only and reports drift",
		Metrics:     []service.Metric{CounterDrift},
	}
)

// Service is the whole contract.
var Service = service.Contract{
	Name: Name, Description: "Stak notification inbox (document 002)", APIVersion: "1.0.1",
	Tables: []service.Table{Inbox},
	Attributes: []string{AttrPK, AttrSK, AttrExpiredAt, AttrKind, AttrTenantKey, AttrInboxKey, AttrUID, AttrTaxonomy,
		AttrPublished, AttrRead, AttrExpired, AttrReadAt, AttrMessage, AttrBody},
	KeyParts: []string{PrefixTenant, PrefixUser, PrefixPublic, PublicUID, KeySettings, PrefixInbox, PrefixMessage,
		PrefixStats, KeyStatsAll, PrefixMarker},
	Functions: []service.Function{API, StreamConsumer, DriftCheck},
}

// Metric dimensions and their values (service.Metric, platform/metrics).
const (
	// DimAudience: a message to everyone (the public partition) or to
	// listed users.
	DimAudience      = "audience"
	AudienceEveryone = "everyone"
	AudienceUsers    = "users"
	// DimRead: how messages were marked read, one or all at once.
	DimHow = "how"
	HowOne = "one"
	HowAll = "all"
)

// Stak's metrics.
var (
	Publishes = service.Metric{Name: "Publishes", Unit: service.Count,
		Description: "messages published, by audience",
		Dimensions:  []service.Dimension{{Name: DimAudience, Values: []string{AudienceEveryone, AudienceUsers}}}}
	// FanOut is, per publish to listed users, how many users it reached.
	FanOut = service.Metric{Name: "FanOut", Unit: service.Count,
		Description: "recipients of each publish to listed users"}
	Reads = service.Metric{Name: "Reads", Unit: service.Count,
		Description: "messages marked read, one at a time or all at once",
		Dimensions:  []service.Dimension{{Name: DimHow, Values: []string{HowOne, HowAll}}}}
	// CounterRepairs is, per recount, how many counters it rewrote: each
	// one a counter that had drifted from the items it counts.
	CounterRepairs = service.Metric{Name: "CounterRepairs", Unit: service.Count,
		Description: "counters a recount found drifted and rewrote"}
	// CounterDrift is, per drift check run, how many counters of its
	// sample differ from the items they count (0 when all are right).
	CounterDrift = service.Metric{Name: "CounterDrift", Unit: service.Count,
		Description: "sampled counters a scheduled read-only recount found drifted"}
	// Expiries counts messages and read receipts whose expiry the stream
	// consumer applied to the counters.
	Expiries = service.Metric{Name: "Expiries", Unit: service.Count,
		Description: "expired messages and read receipts applied to the counters"}
)
