// Package rezagent is the messages service of rez_agent: notification jobs
// (scheduled or manual) with their processing status, stored in one DynamoDB
// table per stage (rez-agent-messages-<stage>) and listed through
// stage-created_date-index and status-created_date-index. The optional
// message_type-created_date-index is not deployed, and nothing here uses it.
//
// The HTTP API is built by NewHandler (New reads the environment):
//
//	POST  /messages         create a message (status created)
//	GET   /messages         list by stage (default) or ?status=…; from, to, limit, cursor
//	GET   /messages/{id}    one message with its payload
//	PATCH /messages/{id}    change the status (created → queued → processing → completed | failed)
//	GET   /metrics          counts by status since ?since=… (default 24 h), success rate, recent messages
//
// Listings take stage (must be the deployment's, DYNASTACK_STAGE; the
// default) or status, which decides when both are given since every item of
// a table has the table's stage. from is inclusive, to exclusive. Expired
// messages (ttl reached, not yet deleted by DynamoDB) read as absent
// everywhere. docs/schemas/rezagent.md has the full API and its decisions.
//
// Store is the data access the handler uses and can be used on its own.
package rezagent

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/lifecycle"
)

// Status is a message's processing state.
type Status string

// Statuses.
const (
	StatusCreated    Status = "created"
	StatusQueued     Status = "queued"
	StatusProcessing Status = "processing"
	StatusCompleted  Status = "completed"
	StatusFailed     Status = "failed"
)

// Statuses lists every status in lifecycle order.
var Statuses = []Status{StatusCreated, StatusQueued, StatusProcessing, StatusCompleted, StatusFailed}

// machine is the state machine of the design document, plus
// processing → processing: SQS delivers at least once, and a processor that
// crashed mid-way gets the message again; refusing that would strand it in
// processing forever. The redelivery counts in retry_count. Nothing moves
// backwards, and completed and failed are final.
var machine = &lifecycle.Machine[Status]{
	Service: contract.Name,
	Subject: "message",
	Order:   Statuses,
	Next: map[Status][]Status{
		StatusCreated:    {StatusQueued, StatusProcessing},
		StatusQueued:     {StatusProcessing},
		StatusProcessing: {StatusProcessing, StatusCompleted, StatusFailed},
		StatusCompleted:  nil,
		StatusFailed:     nil,
	},
	ErrInvalid: ErrInvalidTransition,
}

// Lifecycle is the machine a message's status moves in.
func (Status) Lifecycle() *lifecycle.Machine[Status] { return machine }

// CanTransition reports whether a message in from may move to to.
func CanTransition(from, to Status) bool { return machine.Can(from, to) }

func sourcesOf(to Status) []Status { return machine.Sources(to) }

func (s Status) valid() bool { return machine.Valid(s) }

// Stages a deployment can serve; the table of each holds only its own.
var Stages = []string{"dev", "stage", "prod"}

// Limits.
const (
	// Retention is how long a message lives: ttl is created_date + 90 days.
	Retention = 90 * 24 * time.Hour

	DefaultPageSize = 20
	MaxPageSize     = 100
	// RecentCount is the number of recent messages in Metrics.
	RecentCount = 10
	// DefaultScanBudget bounds the items one listing may read while
	// skipping expired ones (see Store.List).
	DefaultScanBudget = 1000
	// maxCountPages bounds the Query pages of one status count in Metrics;
	// 100 pages of up to 1 MB is far beyond the documented volume.
	maxCountPages = 100

	MaxMessageTypeLen    = 64
	MaxCreatedByLen      = 256
	MaxErrorMessageChars = 4000
	MaxErrorMessageBytes = 8000
	MaxNotificationIDLen = 256
	MaxPayloadDepth      = 16
	maxRequestBodyBytes  = 512 << 10 // above the item limit, so size errors name the item, not the body

	// updateHeadroom is what status changes can add to an item after
	// Create: both processing timestamps, the longest error_message and
	// notification_id, a grown retry_count and the longest status.
	// TestUpdateHeadroom checks the sum.
	updateHeadroom = 9 << 10
	// MaxMessageBytes bounds a new message's item so that every later
	// status change still fits DynamoDB's 400 KB limit without reading the
	// item first.
	MaxMessageBytes = ddb.MaxItemBytes - updateHeadroom
)

// Timestamp formats t for created_date, the sort key of both indexes, so
// that string order is time order.
func Timestamp(t time.Time) string { return ddb.SortableTime(t) }

// Summary is a message without its payload, as listings return it: a
// payload can be hundreds of KB, and a page of them would exceed Lambda's
// 6 MB response limit.
type Summary struct {
	MessageID             string `dynamodbav:"message_id" json:"message_id"`
	CreatedDate           string `dynamodbav:"created_date" json:"created_date"`
	CreatedBy             string `dynamodbav:"created_by" json:"created_by"`
	Stage                 string `dynamodbav:"stage" json:"stage"`
	MessageType           string `dynamodbav:"message_type" json:"message_type"`
	Status                Status `dynamodbav:"status" json:"status"`
	UpdatedDate           string `dynamodbav:"updated_date" json:"updated_date"`
	ProcessingStartedAt   string `dynamodbav:"processing_started_at,omitempty" json:"processing_started_at,omitempty"`
	ProcessingCompletedAt string `dynamodbav:"processing_completed_at,omitempty" json:"processing_completed_at,omitempty"`
	ErrorMessage          string `dynamodbav:"error_message,omitempty" json:"error_message,omitempty"`
	RetryCount            int    `dynamodbav:"retry_count" json:"retry_count"`
	NotificationID        string `dynamodbav:"notification_id,omitempty" json:"notification_id,omitempty"`
	CorrelationID         string `dynamodbav:"correlation_id" json:"correlation_id"`
	// TTL is the expiry in epoch seconds; DynamoDB deletes the item some
	// time after it, and the service hides it from then on.
	TTL int64 `dynamodbav:"ttl,omitempty" json:"ttl,omitempty"`
	// LeaseToken and LeaseUntil (epoch milliseconds) mark the processor
	// delivery that owns a message in processing; internal, never served.
	LeaseToken string `dynamodbav:"lease_token,omitempty" json:"-"`
	// WriteToken is the token of the last status change, never shown: the
	// SDK's retry of a change whose answer was lost finds it and answers
	// as the first attempt would have.
	WriteToken string `dynamodbav:"write_token,omitempty" json:"-"`
	LeaseUntil int64  `dynamodbav:"lease_until,omitempty" json:"-"`
}

// Message is the stored and returned form of a message.
type Message struct {
	Summary
	Payload Payload `dynamodbav:"payload" json:"payload"`
}

// Errors of the store, each with its HTTP answer.
var (
	// ErrNotFound: no message with that id, or it has expired.
	ErrNotFound = api.NewKind("rezagent: message not found", http.StatusNotFound, api.CodeNotFound,
		func(id string, _ error) string { return fmt.Sprintf("message %q not found", id) })
	// ErrTooLarge: the item would exceed MaxMessageBytes (on create) or
	// DynamoDB's item size limit.
	ErrTooLarge = api.NewKind("rezagent: message would exceed the item size limit", http.StatusRequestEntityTooLarge, api.CodeTooLarge,
		api.Says(fmt.Sprintf("the message would exceed the item size limit (%d bytes, leaving room for status changes within DynamoDB's 400 KB)", MaxMessageBytes)))
	// ErrInvalidTransition: see TransitionError.
	ErrInvalidTransition = errors.New("rezagent: invalid status transition")
	// ErrInvalidInput: a store argument breaks a rule the handler checks
	// first (e.g. failed without error_message); for direct Store users,
	// and a backstop, not a path, behind the handler.
	ErrInvalidInput = api.NewKind("rezagent: invalid input", http.StatusBadRequest, api.CodeBadRequest,
		func(_ string, err error) string { return strings.TrimPrefix(err.Error(), "rezagent: ") })
	// ErrNoTypeIndex: listing or counting by message type needs the
	// optional index, which this stage does not deploy.
	ErrNoTypeIndex = api.InvalidKind("rezagent: no message type index",
		api.FieldError{Field: contract.ParamMessageType.String(), Message: "this stage does not deploy " + contract.IndexMessageTypeCreatedDate +
			" (infra/config: RezAgentMessageTypeIndex); list by stage or status instead"})
)

// cursorHint says what a listing's cursor must come with.
const cursorHint = "pass next_cursor of the previous page unchanged, with the same stage, status, from and to"

// TransitionError is a refused status change; From is the status the
// message had when the write was refused. It matches ErrInvalidTransition
// with errors.Is and is answered with 409.
type TransitionError = lifecycle.TransitionError[Status]
