// Package itsm is the mock ITSM ticket service of the L1 voice service desk
// PoC: tickets with comments and a status, stored in one DynamoDB table
// (poc-itsm-tickets-<stage>) and listed per caller through CallerIdIndex.
//
// The HTTP API is built by NewHandler; Store is the data access it uses and
// can be used on its own.
package itsm

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/lifecycle"
)

// Status is a ticket's state.
type Status string

// Statuses.
const (
	StatusOpen       Status = contract.StatusOpen
	StatusInProgress Status = contract.StatusInProgress
	StatusResolved   Status = contract.StatusResolved
	StatusClosed     Status = contract.StatusClosed
)

// Statuses lists every status in lifecycle order.
var Statuses = []Status{StatusOpen, StatusInProgress, StatusResolved, StatusClosed}

// machine is the state machine: open → in_progress → resolved → closed,
// and resolved → open when the caller says the fix did not work. closed is
// final: a closed ticket is history, a new problem is a new ticket.
var machine = &lifecycle.Machine[Status]{
	Service: contract.Name,
	Order:   Statuses,
	Next: map[Status][]Status{
		StatusOpen:       {StatusInProgress},
		StatusInProgress: {StatusResolved},
		StatusResolved:   {StatusClosed, StatusOpen},
		StatusClosed:     nil,
	},
	ErrInvalid: ErrInvalidTransition,
}

// Lifecycle is the machine a ticket's status moves in.
func (Status) Lifecycle() *lifecycle.Machine[Status] { return machine }

// CanTransition reports whether a ticket in from may move to to.
func CanTransition(from, to Status) bool { return machine.Can(from, to) }

// sourcesOf lists the statuses from which to can be reached; the update is
// conditioned on the stored status being one of them.
func sourcesOf(to Status) []Status { return machine.Sources(to) }

func (s Status) valid() bool { return machine.Valid(s) }

// Limits. Lengths are bounded in characters (what the user sees) and in
// UTF-8 bytes (what DynamoDB counts); together with MaxComments they keep
// the largest possible ticket under DynamoDB's 400 KB item limit, so that a
// comment can be appended without reading the item first. TestWorstCaseItem
// checks the arithmetic.
const (
	MaxCallerIDLen      = 128
	MaxDescriptionChars = 4000
	MaxDescriptionBytes = 8000
	MaxCommentChars     = 2000
	MaxCommentBytes     = 3000
	MaxComments         = 100
	PageSize            = 10
	maxRequestBodyBytes = 32 << 10
)

// Timestamp formats t for created_at, the sort key of CallerIdIndex, so that
// string order is time order.
func Timestamp(t time.Time) string { return ddb.SortableTime(t) }

// Ticket is the stored and returned form of a ticket.
type Ticket struct {
	TicketID         string    `dynamodbav:"ticket_id" json:"ticket_id"`
	CallerID         string    `dynamodbav:"caller_id" json:"caller_id"`
	IssueDescription string    `dynamodbav:"issue_description" json:"issue_description"`
	Status           Status    `dynamodbav:"status" json:"status"`
	CreatedAt        string    `dynamodbav:"created_at" json:"created_at"`
	UpdatedAt        string    `dynamodbav:"updated_at" json:"updated_at"`
	Comments         []Comment `dynamodbav:"comments" json:"comments"`
	// WriteToken is the token of the last status change written, never
	// shown: a retry of that write finds it and knows the write is in.
	WriteToken string `dynamodbav:"write_token,omitempty" json:"-"`
	// CommentTokens holds the token of every comment appended (a string
	// set, at most MaxComments of 36 bytes), never shown. One slot like
	// WriteToken is not enough for an append: another comment landing
	// between a lost answer and the SDK's retry would replace the token,
	// and the retry would append its comment a second time (make load
	// under FAULTS=drop found it).
	CommentTokens []string `dynamodbav:"comment_tokens,stringset,omitempty" json:"-"`
}

// Summary is a ticket without its comments, as listings return it.
type Summary struct {
	TicketID         string `dynamodbav:"ticket_id" json:"ticket_id"`
	CallerID         string `dynamodbav:"caller_id" json:"caller_id"`
	IssueDescription string `dynamodbav:"issue_description" json:"issue_description"`
	Status           Status `dynamodbav:"status" json:"status"`
	CreatedAt        string `dynamodbav:"created_at" json:"created_at"`
	UpdatedAt        string `dynamodbav:"updated_at" json:"updated_at"`
}

// Comment is one entry of a ticket's comments list.
type Comment struct {
	CommentText string `dynamodbav:"comment_text" json:"comment_text"`
	AddedAt     string `dynamodbav:"added_at" json:"added_at"`
}

// Errors of the store, each with its HTTP answer.
var (
	// ErrNotFound: no ticket with that id.
	ErrNotFound = api.NewKind("itsm: ticket not found", http.StatusNotFound, api.CodeNotFound,
		func(id string, _ error) string { return fmt.Sprintf("ticket %q not found", id) })
	// ErrClosed: the ticket is closed and takes no more comments.
	ErrClosed = api.NewKind("itsm: ticket is closed", http.StatusConflict, api.CodeConflict,
		func(id string, _ error) string {
			return fmt.Sprintf("ticket %q is closed; comments can no longer be added", id)
		})
	// ErrTooManyComments: the ticket has MaxComments comments.
	ErrTooManyComments = api.NewKind("itsm: ticket has the maximum number of comments", http.StatusRequestEntityTooLarge, api.CodeTooLarge,
		func(id string, _ error) string {
			return fmt.Sprintf("ticket %q already has the maximum of %d comments", id, MaxComments)
		})
	// ErrTooLarge: the item would exceed DynamoDB's item size limit.
	ErrTooLarge = api.NewKind("itsm: ticket would exceed the 400 KB item limit", http.StatusRequestEntityTooLarge, api.CodeTooLarge,
		api.Says("the ticket would exceed DynamoDB's 400 KB item size limit"))
	// ErrInvalidTransition: see TransitionError.
	ErrInvalidTransition = errors.New("itsm: invalid status transition")
)

// TransitionError is a refused status change. It matches
// ErrInvalidTransition with errors.Is and is answered with 409.
type TransitionError = lifecycle.TransitionError[Status]

// cursorHint says what a listing's cursor must come with.
const cursorHint = "pass next_cursor of the previous page unchanged, with the same caller"
