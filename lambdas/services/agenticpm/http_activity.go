package agenticpm

import (
	"context"
	"net/http"
	"time"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
)

type eventRequest struct {
	EventType string   `json:"eventType"`
	Severity  Severity `json:"severity"`
	Summary   string   `json:"summary"`
	Detail    Doc      `json:"detail"`
}

func (in eventRequest) validate() error {
	var v api.Validator
	typeName(&v, "eventType", in.EventType)
	v.OneOf("severity", string(in.Severity), api.Strings(Severities)...)
	text(&v, "summary", in.Summary, MaxTextChars)
	doc(&v, "detail", in.Detail, false, "object")
	return v.Err()
}

func (h *handler) recordProjectEvent(w http.ResponseWriter, r *http.Request) error {
	id, err := projectID(r)
	if err != nil {
		return err
	}
	return h.recordEvent(w, r, id)
}

func (h *handler) recordGlobalEvent(w http.ResponseWriter, r *http.Request) error {
	return h.recordEvent(w, r, "")
}

func (h *handler) recordEvent(w http.ResponseWriter, r *http.Request, projectID string) error {
	var in eventRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	if err := in.validate(); err != nil {
		return err
	}
	e, err := h.store.RecordEvent(r.Context(), NewEvent{ProjectID: projectID, EventType: in.EventType,
		Severity: in.Severity, Summary: in.Summary, Detail: in.Detail})
	if err != nil {
		return err
	}
	created(w, "", e)
	return nil
}

// inProject answers one page of a project's children: the shape of every
// per-project listing route.
func inProject[T any](w http.ResponseWriter, r *http.Request, list func(ctx context.Context, project, after string, limit int) (*Page[T], error)) error {
	id, err := projectID(r)
	if err != nil {
		return err
	}
	var v api.Validator
	_, after, limit := listParams(r, &v)
	if err := v.Err(); err != nil {
		return err
	}
	page, err := list(r.Context(), id, after, limit)
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}

func (h *handler) listProjectEvents(w http.ResponseWriter, r *http.Request) error {
	return inProject(w, r, h.store.ListProjectEvents)
}

// listEvents is the global feed, or with ?date= the events of that UTC
// date from GSI1.
func (h *handler) listEvents(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	q, after, limit := listParams(r, &v)
	date := q.Get(contract.ParamDate)
	if q.Has(contract.ParamDate) {
		if d, err := time.Parse(time.DateOnly, date); err != nil || d.Format(time.DateOnly) != date {
			v.Add(contract.ParamDate.String(), "must be a date, YYYY-MM-DD (UTC)")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	var (
		page *Page[Event]
		err  error
	)
	if q.Has(contract.ParamDate) {
		page, err = h.store.ListEventsByDate(r.Context(), date, after, limit)
	} else {
		page, err = h.store.ListGlobalEvents(r.Context(), after, limit)
	}
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}

type escalationRequest struct {
	Title               string               `json:"title"`
	Context             Doc                  `json:"context"`
	Options             Doc                  `json:"options"`
	AgentRecommendation api.Optional[string] `json:"agentRecommendation"`
	AgentRationale      api.Optional[string] `json:"agentRationale"`
	ExpiresAt           api.Optional[string] `json:"expiresAt"`
}

// validate checks an escalation to create at now and returns its input.
func (in escalationRequest) validate(now time.Time) (NewEscalation, error) {
	var v api.Validator
	text(&v, "title", in.Title, MaxNameChars)
	doc(&v, "context", in.Context, true, "object")
	doc(&v, "options", in.Options, true, "array")
	if in.Options.Kind() == "array" && len(in.Options) > 0 {
		if n, ok := in.Options.ArrayOfObjects(); !ok {
			v.Add("options", "must be an array of objects (each option with its pros and cons)")
		} else if n == 0 {
			v.Add("options", "must offer at least one option")
		}
	}
	optText(&v, "agentRecommendation", in.AgentRecommendation, MaxTextChars)
	optText(&v, "agentRationale", in.AgentRationale, MaxTextChars)
	expires := timestamp(&v, "expiresAt", in.ExpiresAt)
	if expires != "" {
		switch t, _ := time.Parse(time.RFC3339Nano, in.ExpiresAt.V); {
		case t.Before(now.Add(MinEscalationExpiry)):
			v.Add("expiresAt", "must be at least %d minutes in the future, time for a person to decide (got %s, now is %s)", int(MinEscalationExpiry.Minutes()), expires, Timestamp(now))
		case t.Sub(now) > MaxEscalationExpiry:
			v.Add("expiresAt", "must be within %d days", int(MaxEscalationExpiry.Hours()/24))
		}
	}
	return NewEscalation{Title: in.Title, Context: in.Context, Options: in.Options,
		AgentRecommendation: in.AgentRecommendation.V, AgentRationale: in.AgentRationale.V, ExpiresAt: expires}, v.Err()
}

func (h *handler) createEscalation(w http.ResponseWriter, r *http.Request) error {
	id, err := projectID(r)
	if err != nil {
		return err
	}
	var in escalationRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	ne, err := in.validate(h.store.now())
	if err != nil {
		return err
	}
	e, err := h.store.CreateEscalation(r.Context(), id, ne)
	if err != nil {
		return err
	}
	created(w, api.Location(contract.GetEscalation, id, e.ID), e)
	return nil
}

// escalationPath returns the {id} and {eid} path values.
func escalationPath(r *http.Request) (string, string, error) {
	id, err := projectID(r)
	if err != nil {
		return "", "", err
	}
	eid, err := api.PathUUID(r, contract.ParamEID, "escalation")
	return id, eid, err
}

func (h *handler) getEscalation(w http.ResponseWriter, r *http.Request) error {
	id, eid, err := escalationPath(r)
	if err != nil {
		return err
	}
	e, err := h.store.GetEscalation(r.Context(), id, eid)
	return api.Reply(w, http.StatusOK, e, err)
}

// supersede creates an escalation replacing {eid}: the body is a new
// escalation's.
func (h *handler) supersede(w http.ResponseWriter, r *http.Request) error {
	id, eid, err := escalationPath(r)
	if err != nil {
		return err
	}
	var in escalationRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	ne, err := in.validate(h.store.now())
	if err != nil {
		return err
	}
	e, err := h.store.Supersede(r.Context(), id, eid, ne)
	if err != nil {
		return err
	}
	metrics.Count(r.Context(), api.Logger(r.Context()), contract.EscalationsClosed, contract.OutcomeSuperseded)
	created(w, api.Location(contract.GetEscalation, id, e.ID), e)
	return nil
}

func (h *handler) listProjectEscalations(w http.ResponseWriter, r *http.Request) error {
	return inProject(w, r, h.store.ListProjectEscalations)
}

func (h *handler) listEscalations(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	q, after, limit := listParams(r, &v)
	status := q.Get(contract.ParamStatus)
	v.OneOf(contract.ParamStatus.String(), status, api.Strings(EscalationStatuses)...)
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.ListEscalations(r.Context(), EscalationStatus(status), after, limit)
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}

type decisionRequest struct {
	UserDecision string               `json:"userDecision"`
	UserNotes    api.Optional[string] `json:"userNotes"`
}

func (h *handler) decide(w http.ResponseWriter, r *http.Request) error {
	id, eid, err := escalationPath(r)
	if err != nil {
		return err
	}
	var in decisionRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	text(&v, "userDecision", in.UserDecision, MaxTextChars)
	optText(&v, "userNotes", in.UserNotes, MaxTextChars)
	if err := v.Err(); err != nil {
		return err
	}
	e, err := h.store.Decide(r.Context(), id, eid, Decision{UserDecision: in.UserDecision, UserNotes: in.UserNotes.V})
	return api.Reply(w, http.StatusOK, e, err)
}

type actionRequest struct {
	ActionType  string               `json:"actionType"`
	Description string               `json:"description"`
	Detail      Doc                  `json:"detail"`
	Confidence  Doc                  `json:"confidence"`
	HeldUntil   api.Optional[string] `json:"heldUntil"`
	// Held without heldUntil holds the action for hold_queue_minutes.
	Held api.Optional[bool] `json:"held"`
}

func (h *handler) recordAction(w http.ResponseWriter, r *http.Request) error {
	id, err := projectID(r)
	if err != nil {
		return err
	}
	var in actionRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	typeName(&v, "actionType", in.ActionType)
	text(&v, "description", in.Description, MaxTextChars)
	doc(&v, "detail", in.Detail, false, "object")
	doc(&v, "confidence", in.Confidence, false, "object")
	held := timestamp(&v, "heldUntil", in.HeldUntil)
	if held != "" {
		now := h.store.now()
		switch t, _ := time.Parse(time.RFC3339Nano, in.HeldUntil.V); {
		case t.Before(now.Add(MinHold)):
			v.Add("heldUntil", "must be at least %d minute in the future, time for a person to cancel (got %s, now is %s); record an action done now without held and heldUntil", int(MinHold.Minutes()), held, Timestamp(now))
		case t.Sub(now) > MaxHoldQueue:
			v.Add("heldUntil", "must be within %d days", int(MaxHoldQueue.Hours()/24))
		}
	}
	hold := in.Held.Present(&v, "held") && in.Held.V
	if in.Held.Set && !in.Held.V && in.HeldUntil.Set {
		v.Add("held", "is false but heldUntil is given; omit held, or heldUntil")
	}
	if err := v.Err(); err != nil {
		return err
	}
	a, err := h.store.RecordAction(r.Context(), id, NewAction{ActionType: in.ActionType, Description: in.Description,
		Detail: in.Detail, Confidence: in.Confidence, HeldUntil: held, Held: hold})
	if err != nil {
		return err
	}
	created(w, "", a)
	return nil
}

func (h *handler) listActions(w http.ResponseWriter, r *http.Request) error {
	return inProject(w, r, h.store.ListActions)
}

// actionID returns the {aid} path value: a ULID, else a 404 without a
// DynamoDB call.
func actionID(r *http.Request) (string, error) {
	id := api.PathValue(r, contract.ParamAID)
	if !ids.ValidULID(id) {
		return "", api.NotFound("action %q not found", api.Truncate(id, 64))
	}
	return id, nil
}

func (h *handler) releaseAction(w http.ResponseWriter, r *http.Request) error {
	return onAction(w, r, h.store.ReleaseAction)
}

func (h *handler) cancelAction(w http.ResponseWriter, r *http.Request) error {
	return onAction(w, r, h.store.CancelAction)
}

func (h *handler) markExecuted(w http.ResponseWriter, r *http.Request) error {
	return onAction(w, r, h.store.MarkExecuted)
}

// onAction runs op on the action the path names and answers 200 with its
// result: the shape of every body-less action route.
func onAction[T any](w http.ResponseWriter, r *http.Request, op func(ctx context.Context, project, action string) (T, error)) error {
	id, err := projectID(r)
	if err != nil {
		return err
	}
	aid, err := actionID(r)
	if err != nil {
		return err
	}
	out, err := op(r.Context(), id, aid)
	return api.Reply(w, http.StatusOK, out, err)
}

func (h *handler) listHeldActions(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	_, after, limit := listParams(r, &v)
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.ListHeldActions(r.Context(), after, limit)
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}
