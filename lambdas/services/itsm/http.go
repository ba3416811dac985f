package itsm

import (
	"context"
	"errors"
	"net/http"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
)

// Config configures NewHandler.
type Config struct {
	Table string
	fn.Common
}

// ConfigFromEnv reads the configuration (not the client) from getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	v, common, err := fn.Tables(contract.Name, getenv, contract.Tickets)
	if err != nil {
		return Config{}, err
	}
	return Config{Table: v[0], Common: common}, nil
}

// New builds the service from the environment: the constructor of its
// function (APIFunction).
func New(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (http.Handler, error) {
	return fn.New(ctx, getenv, ConfigFromEnv, (*Config).SetClient, NewHandler, opts...)
}

// NewHandler returns the HTTP API of the contract (routes in
// constructs/itsm/contract; docs/schemas/itsm.md): create a ticket, a
// caller's tickets newest first, a ticket with its comments, add a comment,
// change the status.
func NewHandler(cfg Config) http.Handler {
	log := fn.Logger(contract.Name, cfg.Client, cfg.Logger)
	store := NewStore(cfg.Client, cfg.Table, cfg.CursorKey)
	cfg.Pin(&store.now, &store.newID)
	h := &handler{store: store}
	keys := api.IdempotencyTable{Client: cfg.Client, Name: cfg.Table, PartitionKey: contract.AttrTicketID, TTL: contract.AttrExpiresAt, Now: cfg.Now}
	r := api.NewRouter(contract.API).Around(keys.Middleware)
	r.Handle(contract.CreateTicket, h.create)
	r.Handle(contract.ListTickets, h.list)
	r.Handle(contract.GetTicket, h.get)
	r.Handle(contract.SetStatus, h.setStatus)
	r.Handle(contract.AddComment, h.comment)
	return api.Instrument(log, r.Done())
}

type handler struct {
	store *Store
}

type createRequest struct {
	CallerID         string `json:"caller_id"`
	IssueDescription string `json:"issue_description"`
}

func (h *handler) create(w http.ResponseWriter, r *http.Request) error {
	var in createRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	callerID(&v, "caller_id", in.CallerID)
	textField(&v, "issue_description", in.IssueDescription, MaxDescriptionChars, MaxDescriptionBytes)
	if err := v.Err(); err != nil {
		return err
	}
	t, err := h.store.Create(r.Context(), NewTicket(in))
	if err != nil {
		return err
	}
	metrics.Count(r.Context(), api.Logger(r.Context()), contract.TicketStatusChanges, string(t.Status))
	// Relative, so it resolves under whatever prefix the API is mounted at
	// (/itsm locally, a stage path in API Gateway).
	w.Header().Set("Location", api.Location(contract.GetTicket, t.TicketID))
	api.WriteJSON(w, http.StatusCreated, t)
	return nil
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) error {
	id, err := ticketID(r)
	if err != nil {
		return err
	}
	t, err := h.store.Get(r.Context(), id)
	return api.Reply(w, http.StatusOK, t, api.About(err, id))
}

type commentRequest struct {
	CommentText string `json:"comment_text"`
}

func (h *handler) comment(w http.ResponseWriter, r *http.Request) error {
	id, err := ticketID(r)
	if err != nil {
		return err
	}
	var in commentRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	textField(&v, "comment_text", in.CommentText, MaxCommentChars, MaxCommentBytes)
	if err := v.Err(); err != nil {
		return err
	}
	t, err := h.store.AddComment(r.Context(), id, in.CommentText)
	if err == nil {
		metrics.Count(r.Context(), api.Logger(r.Context()), contract.TicketComments)
	}
	return api.Reply(w, http.StatusCreated, t, api.About(err, id))
}

type statusRequest struct {
	Status Status `json:"status"`
}

func (h *handler) setStatus(w http.ResponseWriter, r *http.Request) error {
	id, err := ticketID(r)
	if err != nil {
		return err
	}
	var in statusRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	v.OneOf("status", string(in.Status), api.Strings(Statuses)...)
	if err := v.Err(); err != nil {
		return err
	}
	t, err := h.store.SetStatus(r.Context(), id, in.Status)
	if err == nil {
		metrics.Count(r.Context(), api.Logger(r.Context()), contract.TicketStatusChanges, string(in.Status))
	}
	return api.Reply(w, http.StatusOK, t, api.About(err, id))
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	q := api.QueryOf(r)
	caller := q.Get(contract.ParamCaller)
	callerID(&v, contract.ParamCaller.String(), caller)
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.ListByCaller(r.Context(), caller, q.Cursor())
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}

// callerID checks a caller id: an identifier in one of the contract's two
// forms, never a phone number (contract.CheckCallerID; the 400 names the
// field and both forms).
func callerID(v *api.Validator, field, s string) {
	// A phone number is refused as one, even written with spaces (which
	// the identifier check below would name instead).
	if err := contract.CheckCallerID(s); errors.Is(err, contract.ErrCallerIDIsPhone) {
		v.Add(field, "%s", err)
		return
	}
	var before api.Validator
	before.Identifier(field, s, MaxCallerIDLen)
	if err := before.Err(); err != nil {
		v.Identifier(field, s, MaxCallerIDLen)
		return
	}
	if err := contract.CheckCallerID(s); err != nil {
		v.Add(field, "%s", err)
	}
}

// ticketID returns the path id, a canonical UUID.
func ticketID(r *http.Request) (string, error) { return api.PathUUID(r, contract.ParamID, "ticket") }

func textField(v *api.Validator, field, s string, maxChars, maxBytes int) {
	v.Text(field, s, 1, maxChars)
	v.MaxBytes(field, s, maxBytes)
}
