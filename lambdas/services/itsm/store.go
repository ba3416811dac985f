package itsm

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// API is the part of *dynamodb.Client the service calls.
type API = ddb.API

// Store reads and writes tickets in one table.
type Store struct {
	client API
	table  string
	codec  *ddb.CursorCodec
	now    func() time.Time
	newID  func() string
}

// NewStore returns a Store on table. cursorKey signs list cursors.
func NewStore(client API, table string, cursorKey []byte) *Store {
	return &Store{client: client, table: table, codec: ddb.NewCursorCodec(cursorKey), now: time.Now, newID: uuid.NewString}
}

// NewTicket is the input of Create.
type NewTicket struct {
	CallerID         string
	IssueDescription string
}

// Create stores a new open ticket.
func (s *Store) Create(ctx context.Context, in NewTicket) (*Ticket, error) {
	now := Timestamp(s.now())
	t := &Ticket{
		TicketID:         s.newID(),
		CallerID:         in.CallerID,
		IssueDescription: in.IssueDescription,
		Status:           StatusOpen,
		CreatedAt:        now,
		UpdatedAt:        now,
		Comments:         []Comment{}, // an empty L, so list_append needs no if_not_exists
	}
	item, err := attributevalue.MarshalMap(t)
	if err != nil {
		return nil, fmt.Errorf("itsm: marshal ticket: %w", err)
	}
	if ddb.ItemSize(item) > ddb.MaxItemBytes {
		return nil, ErrTooLarge
	}
	if err := ddb.Create(ctx, s.client, s.table, item, contract.AttrTicketID); err != nil {
		return nil, storeError("PutItem", err)
	}
	return t, nil
}

type ticketKey struct {
	TicketID string `dynamodbav:"ticket_id"`
}

func (s *Store) key(id string) (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMap(ticketKey{TicketID: id})
}

// Get returns the ticket with id, read strongly consistent so a ticket is
// visible right after Create returns.
func (s *Store) Get(ctx context.Context, id string) (*Ticket, error) {
	key, err := s.key(id)
	if err != nil {
		return nil, err
	}
	item, err := ddb.Get(ctx, s.client, s.table, key)
	if err != nil {
		return nil, storeError("GetItem", err)
	}
	if item == nil {
		return nil, ErrNotFound
	}
	return unmarshalTicket(item)
}

// AddComment appends a comment and returns the updated ticket.
//
// It is one conditional UpdateItem: the ticket must exist (without the
// condition UpdateItem would create a phantom ticket holding only the
// comment), must not be closed, and must have room for another comment.
// When the condition fails, DynamoDB returns the current item, which tells
// the three cases apart without a read beforehand.
func (s *Store) AddComment(ctx context.Context, id, text string) (*Ticket, error) {
	now := Timestamp(s.now())
	// The append is not idempotent: if DynamoDB applied it and its answer
	// was lost, the SDK's retry of the same request would append the
	// comment again. Each comment's token joins a set in the same update,
	// so the retry fails its condition instead, and the set in the item
	// it finds says the comment is in, whatever was written in between.
	token := uuid.NewString()
	comment, err := attributevalue.Marshal([]Comment{{CommentText: text, AddedAt: now}})
	if err != nil {
		return nil, fmt.Errorf("itsm: marshal comment: %w", err)
	}
	t, err := s.update(ctx, id, ddb.Expr{
		Update:    "SET #comments = list_append(#comments, :comment), #updated = :now ADD #tokens :tokens",
		Condition: "attribute_exists(#id) AND #status <> :closed AND size(#comments) < :max AND NOT contains(#tokens, :token)",
		Names: map[string]string{"#comments": contract.AttrComments, "#updated": contract.AttrUpdatedAt, "#tokens": contract.AttrCommentTokens,
			"#id": contract.AttrTicketID, "#status": contract.AttrStatus},
		Values: map[string]types.AttributeValue{
			":comment": comment,
			":now":     &types.AttributeValueMemberS{Value: now},
			":tokens":  &types.AttributeValueMemberSS{Value: []string{token}},
			":closed":  &types.AttributeValueMemberS{Value: string(StatusClosed)},
			":max":     &types.AttributeValueMemberN{Value: strconv.Itoa(MaxComments)},
			":token":   &types.AttributeValueMemberS{Value: token},
		},
	})
	hasComment := func(t *Ticket) string {
		if slices.Contains(t.CommentTokens, token) {
			return token
		}
		return ""
	}
	if mine, err := ddb.OwnWrite(err, hasComment, token, func(old *Ticket) error {
		switch {
		case old == nil:
			return ErrNotFound
		case old.Status == StatusClosed:
			return ErrClosed
		case len(old.Comments) >= MaxComments:
			return ErrTooManyComments
		}
		return fmt.Errorf("itsm: add comment: condition failed on ticket in state %s", old.Status)
	}); mine != nil || err != nil {
		return mine, err
	}
	return t, nil
}

func writeToken(t *Ticket) string { return t.WriteToken }

// SetStatus moves the ticket to status to and returns the updated ticket.
//
// The update is conditioned on the stored status being one from which to
// is allowed, so two concurrent changes cannot together skip a step (e.g.
// resolved→closed racing resolved→open): the loser gets a TransitionError
// naming the status it actually found.
func (s *Store) SetStatus(ctx context.Context, id string, to Status) (*Ticket, error) {
	if !to.valid() {
		return nil, fmt.Errorf("itsm: unknown status %q", to)
	}
	sources := sourcesOf(to)
	if len(sources) == 0 {
		return nil, &TransitionError{From: "", To: to}
	}
	now := Timestamp(s.now())
	// No status moves to itself, so the SDK's retry of a change whose
	// answer was lost fails its condition; the write's token in the item
	// it finds tells that apart from another request's change.
	token := uuid.NewString()
	values := map[string]types.AttributeValue{
		":to":    &types.AttributeValueMemberS{Value: string(to)},
		":now":   &types.AttributeValueMemberS{Value: now},
		":token": &types.AttributeValueMemberS{Value: token},
	}
	in := make([]string, len(sources))
	for i, st := range sources {
		in[i] = ":from" + strconv.Itoa(i)
		values[in[i]] = &types.AttributeValueMemberS{Value: string(st)}
	}
	t, err := s.update(ctx, id, ddb.Expr{
		Update:    "SET #status = :to, #updated = :now, #token = :token",
		Condition: "attribute_exists(#id) AND #status IN (" + strings.Join(in, ", ") + ")",
		Names: map[string]string{"#status": contract.AttrStatus, "#updated": contract.AttrUpdatedAt, "#token": contract.AttrWriteToken,
			"#id": contract.AttrTicketID},
		Values: values,
	})
	if mine, err := ddb.OwnWrite(err, writeToken, token, func(old *Ticket) error {
		if old == nil {
			return ErrNotFound
		}
		return &TransitionError{From: old.Status, To: to}
	}); mine != nil || err != nil {
		return mine, err
	}
	return t, nil
}

// update applies e, written out (ddb.Expr: an update's shape is the same
// on every request, so the SDK's expression builder would only render
// the same strings again), to the ticket id.
func (s *Store) update(ctx context.Context, id string, e ddb.Expr) (*Ticket, error) {
	key, err := s.key(id)
	if err != nil {
		return nil, err
	}
	item, err := ddb.UpdateExpr(ctx, s.client, s.table, key, e)
	if err != nil {
		return nil, storeError("UpdateItem", err)
	}
	return unmarshalTicket(item)
}

func unmarshalTicket(item map[string]types.AttributeValue) (*Ticket, error) {
	var t Ticket
	if err := attributevalue.UnmarshalMap(item, &t); err != nil {
		return nil, fmt.Errorf("itsm: unmarshal ticket: %w", err)
	}
	if t.Comments == nil {
		t.Comments = []Comment{}
	}
	return &t, nil
}

func storeError(op string, err error) error {
	return ddb.WrapAs(op, err, ddb.ErrItemTooLarge, ErrTooLarge)
}

// Page is one page of a listing.
type Page struct {
	Tickets []Summary `json:"tickets"`
	// Next is the cursor of the next page, "" on the last page.
	Next string `json:"next_cursor,omitempty"`
}

// callerPageKey is a position in CallerIdIndex: an index key must carry the
// table key too.
type callerPageKey struct {
	TicketID  string `json:"i" dynamodbav:"ticket_id"`
	CallerID  string `json:"c" dynamodbav:"caller_id"`
	CreatedAt string `json:"t" dynamodbav:"created_at"`
}

func callerScope(caller string) string { return contract.IndexCallerID + "/" + caller }

// summaryProjection is what a listing returns, written out: everything
// but comments, which can make a ticket hundreds of KB; GET /tickets/{id}
// has them. Its names (summaryNames) serve the key condition too. Shared
// by every request: never written to.
const summaryProjection = "#id, #caller, #issue, #status, #created, #updated"

var summaryNames = map[string]string{"#id": contract.AttrTicketID, "#caller": contract.AttrCallerID, "#issue": contract.AttrIssueDescription,
	"#status": contract.AttrStatus, "#created": contract.AttrCreatedAt, "#updated": contract.AttrUpdatedAt}

// ListByCaller returns the caller's tickets, newest first, PageSize per
// page. after is the Next of the previous page, "" for the first; a cursor
// made for another caller is ddb.ErrInvalidCursor.
//
// CallerIdIndex is a GSI, so the listing is eventually consistent: a ticket
// created a moment ago may be missing from it.
func (s *Store) ListByCaller(ctx context.Context, caller, after string) (*Page, error) {
	in := ddb.Expr{KeyCondition: "#caller = :caller", Projection: summaryProjection, Names: summaryNames,
		Values: map[string]types.AttributeValue{":caller": ddb.S(caller)}}.Query(s.table)
	in.IndexName, in.ScanIndexForward = aws.String(contract.IndexCallerID), aws.Bool(false)
	// No filter and no bound: the pager queries until it has a page and one
	// ticket more, or the caller's tickets run out.
	q := ddb.Query[Summary, callerPageKey]{
		Input: in,
		Pager: ddb.Pager{Size: PageSize},
		Codec: s.codec,
		Scope: callerScope(caller),
		// The MAC already binds the cursor to caller; checking the key too
		// keeps that true even if the scope format ever changes.
		Check: func(k callerPageKey) error {
			if k.CallerID != caller {
				return ddb.ErrInvalidCursor
			}
			return nil
		},
	}
	page, err := q.Page(ctx, s.client, after)
	if err != nil {
		return nil, err
	}
	return &Page{Tickets: page.Items, Next: page.Next}, nil
}
