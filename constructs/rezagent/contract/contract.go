// Package contract is rez_agent's contract (design document 000,
// docs/schemas/rezagent.md): its table's names, its functions and its
// routes, declared once for the stacks and the Lambda code alike.
package contract

import "github.com/dynastack/dynastack/constructs/service"

// Names fixed by the design document.
const (
	Name          = "rezagent"
	TableBaseName = "rez-agent-messages"

	AttrMessageID   = "message_id"
	AttrStage       = "stage"
	AttrStatus      = "status"
	AttrMessageType = "message_type"
	AttrCreatedDate = "created_date"
	// AttrTTL is the document's "TTL (optional)": a Number of epoch
	// seconds, set on delivered and failed messages.
	AttrTTL = "ttl"
	// AttrCorrelationID is the document's correlation_id: an item
	// attribute, the SNS message attribute that carries it (raw delivery
	// makes it the SQS record's), and the key of every log line about the
	// message.
	AttrCorrelationID = "correlation_id"
	// The other attributes of a message the code names (in updates,
	// conditions and the listings' projection).
	AttrCreatedBy             = "created_by"
	AttrUpdatedDate           = "updated_date"
	AttrProcessingStartedAt   = "processing_started_at"
	AttrProcessingCompletedAt = "processing_completed_at"
	AttrErrorMessage          = "error_message"
	AttrRetryCount            = "retry_count"
	AttrNotificationID        = "notification_id"
	// AttrWriteToken is the token of the last status change, which tells
	// a retried change from another request's.
	AttrWriteToken = "write_token"
	// AttrLeaseToken and AttrLeaseUntil (epoch milliseconds) mark the
	// processor delivery that owns a message in processing.
	AttrLeaseToken = "lease_token"
	AttrLeaseUntil = "lease_until"

	IndexStageCreatedDate  = "stage-created_date-index"
	IndexStatusCreatedDate = "status-created_date-index"
	// IndexMessageTypeCreatedDate is the document's optional index, off
	// unless a stage enables it.
	IndexMessageTypeCreatedDate = "message_type-created_date-index"
)

// Variables of the functions.
const (
	// EnvTable carries the messages table's physical name.
	EnvTable = "REZ_AGENT_MESSAGES_TABLE"
	// EnvTopicArn is the SNS topic new messages are published to.
	EnvTopicArn = "REZ_AGENT_TOPIC_ARN"
	// EnvNtfyURL, EnvNtfyTopic: where the processor delivers.
	EnvNtfyURL   = "NTFY_URL"
	EnvNtfyTopic = "NTFY_TOPIC"
	// EnvNtfyTokenParameter names an SSM SecureString holding an ntfy
	// access token, read once per execution environment; EnvNtfyToken
	// gives the token itself, for the local runner only (no template
	// carries it).
	EnvNtfyTokenParameter = "NTFY_TOKEN_PARAMETER"
	EnvNtfyToken          = "NTFY_TOKEN"
	// EnvNtfyTimeout bounds one ntfy call (a Go duration).
	EnvNtfyTimeout = "NTFY_TIMEOUT"
	// EnvMaxReceiveCount is the queue's redrive maximum: the processor's
	// attempt with this receive count is the last.
	EnvMaxReceiveCount = "REZ_AGENT_MAX_RECEIVE_COUNT"
	// EnvRepublishAfter is how long a created message waits before a
	// scheduler run publishes it again (a Go duration).
	EnvRepublishAfter = "REZ_AGENT_REPUBLISH_AFTER"
	// EnvTypeIndex names IndexMessageTypeCreatedDate to the API when its
	// stage deploys the index; unset, listing and counting by type answer
	// 400.
	EnvTypeIndex = "REZ_AGENT_TYPE_INDEX"
)

// Parameters of the routes.
const (
	// ParamID is a message's id, a UUID.
	ParamID service.PathParam = "id"
	// ParamStage, ParamStatus and ParamMessageType choose what
	// ListMessages lists (ParamMessageType also what Metrics counts): the
	// deployment's stage, one status, or one message type.
	ParamStage       service.QueryParam = "stage"
	ParamStatus      service.QueryParam = "status"
	ParamMessageType service.QueryParam = "message_type"
	// ParamFrom and ParamTo bound a listing's creation times (RFC 3339).
	ParamFrom service.QueryParam = "from"
	ParamTo   service.QueryParam = "to"
	// ParamSince starts the window Metrics counts (RFC 3339).
	ParamSince service.QueryParam = "since"
)

// Messages is the messages table.
var Messages = service.Table{BaseName: TableBaseName, Env: EnvTable}

// The messages API (document 000: get by id, list by stage or status,
// status updates, metrics).
var (
	CreateMessage = service.Route{Operation: "createMessage", Method: "POST", Path: "/messages", Idempotent: true}
	// ListMessages lists the stage's messages, one status's, or, where
	// the stage deploys IndexMessageTypeCreatedDate, one message type's.
	ListMessages = service.Route{Operation: "listMessages", Method: "GET", Path: "/messages", Query: []service.QueryParam{ParamStage, ParamStatus, ParamMessageType, ParamFrom, ParamTo, service.Limit, service.Cursor}}
	GetMessage   = service.Route{Operation: "getMessage", Method: "GET", Path: "/messages/{id}"}
	SetStatus    = service.Route{Operation: "setStatus", Method: "PATCH", Path: "/messages/{id}"}
	Metrics      = service.Route{Operation: "metrics", Method: "GET", Path: "/metrics", Query: []service.QueryParam{ParamSince, ParamMessageType}}
)

// The functions.
var (
	API = service.Function{
		Name: Name, Kind: service.HTTP, Description: "rez_agent messages API",
		Routes: []service.Route{CreateMessage, ListMessages, GetMessage, SetStatus, Metrics},
	}
	Scheduler = service.Function{
		Name: "rezagent-scheduler", Kind: service.Schedule,
		Description: "rez_agent scheduler: one scheduled_hello per fire, republishes stranded messages",
	}
	Processor = service.Function{
		Name: "rezagent-processor", Kind: service.Queue,
		Description: "rez_agent processor: delivers queued messages to ntfy",
		Metrics:     []service.Metric{Deliveries},
	}
)

// Service is the whole contract.
var Service = service.Contract{
	Name: Name, Description: "rez_agent messages (document 000)", APIVersion: "1.0.1",
	Tables: []service.Table{Messages},
	Attributes: []string{AttrMessageID, AttrStage, AttrStatus, AttrMessageType, AttrCreatedDate, AttrTTL, AttrCorrelationID,
		AttrCreatedBy, AttrUpdatedDate, AttrProcessingStartedAt, AttrProcessingCompletedAt, AttrErrorMessage, AttrRetryCount,
		AttrNotificationID, AttrWriteToken, AttrLeaseToken, AttrLeaseUntil},
	Functions: []service.Function{API, Scheduler, Processor},
}

// The message types of the design document (payload.go validates their
// payloads); other types are accepted and counted as service.OtherValue.
const (
	TypeScheduledHello     = "scheduled_hello"
	TypeManualNotification = "manual_notification"
)

// Metric dimensions and their values (service.Metric, platform/metrics).
const (
	DimType    = "type"
	DimOutcome = "outcome"
	// OutcomeDelivered: ntfy accepted the notification. OutcomeRetried:
	// a delivery failed and SQS delivers the record again.
	// OutcomeFailedForGood: the message is failed (a 4xx from ntfy, an
	// expired token, the last receive), acknowledged, never in the DLQ.
	OutcomeDelivered     = "delivered"
	OutcomeRetried       = "retried"
	OutcomeFailedForGood = "failed_for_good"
)

// Deliveries counts the processor's delivery attempts by message type and
// outcome; the FailedForGood alarm is the share of failed_for_good.
var Deliveries = service.Metric{
	Name: "Deliveries", Unit: service.Count,
	Description: "delivery attempts to ntfy by message type and outcome",
	Dimensions: []service.Dimension{
		{Name: DimType, Values: []string{TypeScheduledHello, TypeManualNotification, service.OtherValue}},
		{Name: DimOutcome, Values: []string{OutcomeDelivered, OutcomeRetried, OutcomeFailedForGood}},
	},
}
