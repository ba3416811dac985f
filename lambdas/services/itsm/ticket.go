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
	"slices"
	"strings"
	"time"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/sortable"
)

// Status is a ticket's state.
type Status string

// Statuses.
const (
	StatusOpen       Status = "open"
	StatusInProgress Status = "in_progress"
	StatusResolved   Status = "resolved"
	StatusClosed     Status = "closed"
)

// Statuses lists every status in lifecycle order.
var Statuses = []Status{StatusOpen, StatusInProgress, StatusResolved, StatusClosed}

// transitions is the state machine: open → in_progress → resolved → closed,
// and resolved → open when the caller says the fix did not work. closed is
// final: a closed ticket is history, a new problem is a new ticket.
var transitions = map[Status][]Status{
	StatusOpen:       {StatusInProgress},
	StatusInProgress: {StatusResolved},
	StatusResolved:   {StatusClosed, StatusOpen},
	StatusClosed:     nil,
}

// CanTransition reports whether a ticket in from may move to to.
func CanTransition(from, to Status) bool { return slices.Contains(transitions[from], to) }

// sourcesOf lists the statuses from which to can be reached; the update is
// conditioned on the stored status being one of them.
func sourcesOf(to Status) []Status {
	var out []Status
	for _, from := range Statuses {
		if CanTransition(from, to) {
			out = append(out, from)
		}
	}
	return out
}

func (s Status) valid() bool { return slices.Contains(Statuses, s) }

// Limits. Lengths are bounded in characters (what the user sees) and in
// UTF-8 bytes (what DynamoDB counts); together with MaxComments they keep
// the largest possible ticket under DynamoDB's 400 KB item limit, so that a
// comment can be appended without reading the item first. TestWorstCaseItem
// checks the arithmetic.
const (
	MaxCallerIDLen       = 128
	MaxDescriptionChars  = 4000
	MaxDescriptionBytes  = 8000
	MaxCommentChars      = 2000
	MaxCommentBytes      = 3000
	MaxComments          = 100
	PageSize             = 10
	maxRequestBodyBytes  = 32 << 10
	ticketIDLen          = 36
	callerIndexName      = contract.IndexCallerID
	statusConflictPrefix = "itsm: cannot change status"
)

// Timestamp formats t for created_at, the sort key of CallerIdIndex, so that
// string order is time order.
func Timestamp(t time.Time) string { return sortable.Time(t) }

// Ticket is the stored and returned form of a ticket.
type Ticket struct {
	TicketID         string    `dynamodbav:"ticket_id" json:"ticket_id"`
	CallerID         string    `dynamodbav:"caller_id" json:"caller_id"`
	IssueDescription string    `dynamodbav:"issue_description" json:"issue_description"`
	Status           Status    `dynamodbav:"status" json:"status"`
	CreatedAt        string    `dynamodbav:"created_at" json:"created_at"`
	UpdatedAt        string    `dynamodbav:"updated_at" json:"updated_at"`
	Comments         []Comment `dynamodbav:"comments" json:"comments"`
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

// Errors of the store; the handler maps each to a status code.
var (
	// ErrNotFound: no ticket with that id.
	ErrNotFound = errors.New("itsm: ticket not found")
	// ErrClosed: the ticket is closed and takes no more comments.
	ErrClosed = errors.New("itsm: ticket is closed")
	// ErrTooManyComments: the ticket has MaxComments comments.
	ErrTooManyComments = errors.New("itsm: ticket has the maximum number of comments")
	// ErrTooLarge: the item would exceed DynamoDB's item size limit.
	ErrTooLarge = errors.New("itsm: ticket would exceed the 400 KB item limit")
	// ErrInvalidTransition: see TransitionError.
	ErrInvalidTransition = errors.New("itsm: invalid status transition")
)

// TransitionError is a refused status change. It matches
// ErrInvalidTransition with errors.Is.
type TransitionError struct {
	From, To Status
}

func (e *TransitionError) Error() string {
	allowed := make([]string, 0, 2)
	for _, s := range transitions[e.From] {
		allowed = append(allowed, string(s))
	}
	if len(allowed) == 0 {
		return fmt.Sprintf("%s from %s to %s: %s is final", statusConflictPrefix, e.From, e.To, e.From)
	}
	return fmt.Sprintf("%s from %s to %s; allowed from %s: %s", statusConflictPrefix, e.From, e.To, e.From, strings.Join(allowed, ", "))
}

// Is implements errors.Is.
func (e *TransitionError) Is(target error) bool { return target == ErrInvalidTransition }
