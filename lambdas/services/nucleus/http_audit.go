package nucleus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

type executionRequest struct {
	EntityType EntityType      `json:"entity_type"`
	EntityID   string          `json:"entity_id"`
	Action     Action          `json:"action"`
	Status     AuditStatus     `json:"status"`
	Details    json.RawMessage `json:"details"`
}

// recordExecution is POST /audit. It takes EXECUTE entries only: CREATE,
// UPDATE and DELETE are written by the service with the change itself, and
// accepting them from clients would let anyone forge history.
func (h *handler) recordExecution(w http.ResponseWriter, r *http.Request) error {
	var in executionRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	u := user(&v, r)
	v.OneOf("entity_type", string(in.EntityType), string(EntityAccount), string(EntitySchedule), string(EntityGlobal))
	switch in.EntityType {
	case EntityAccount:
		checkAccountID(&v, "entity_id", in.EntityID)
	case EntitySchedule:
		if in.EntityID == "" {
			v.Add("entity_id", "is required")
		} else if !validScheduleID(in.EntityID) {
			v.Add("entity_id", "must be a schedule id (a lower-case UUID)")
		}
	case EntityGlobal:
		if in.EntityID != "" {
			v.Add("entity_id", "must be absent for entity_type global")
		}
	}
	v.OneOf("action", string(in.Action), string(ActionExecute))
	v.OneOf("status", string(in.Status), string(StatusSuccess), string(StatusFail))
	if in.Details != nil {
		var buf bytes.Buffer
		switch err := json.Compact(&buf, in.Details); {
		case err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{':
			v.Add("details", "must be a JSON object")
		case buf.Len() > MaxDetailsBytes:
			v.Add("details", "must be at most %d bytes of JSON (got %d)", MaxDetailsBytes, buf.Len())
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	e, err := h.store.RecordExecution(r.Context(), u, Execution{Entity: Entity{in.EntityType, in.EntityID}, Status: in.Status, Details: in.Details})
	if errors.Is(err, ErrAccountNotFound) || errors.Is(err, ErrScheduleNotFound) {
		return &api.Error{Status: http.StatusConflict, Code: api.CodeConflict, Err: err,
			Message: fmt.Sprintf("entity_id: %s %q does not exist", in.EntityType, in.EntityID)}
	}
	return api.Reply(w, http.StatusCreated, e, err)
}

func (h *handler) timeline(w http.ResponseWriter, r *http.Request) error {
	return h.auditLog(w, r, nil)
}

func (h *handler) globalLog(w http.ResponseWriter, r *http.Request) error {
	return h.auditLog(w, r, &Entity{Type: EntityGlobal})
}

// entityLog is GET /audit/{entityType}/{id}. It does not check that the
// entity exists: the log is history and may outlive what it describes.
func (h *handler) entityLog(w http.ResponseWriter, r *http.Request) error {
	typ, id := EntityType(api.PathValue(r, contract.ParamEntityType)), api.PathValue(r, contract.ParamID)
	switch {
	case typ == EntityAccount && ValidAccountID(id), typ == EntitySchedule && validScheduleID(id):
		return h.auditLog(w, r, &Entity{Type: typ, ID: id})
	case typ == EntityAccount || typ == EntitySchedule:
		return api.NotFound("%s %q not found", typ, api.Truncate(id, 64))
	}
	return api.NotFound("no audit log for entity type %q; use account or schedule", api.Truncate(string(typ), 64))
}

func (h *handler) auditLog(w http.ResponseWriter, r *http.Request, e *Entity) error {
	var v api.Validator
	q := api.QueryOf(r)
	n := api.PageLimit(&v, q, 0, MaxPageSize)
	since := timeQuery(&v, q, contract.ParamSince)
	until := timeQuery(&v, q, contract.ParamUntil)
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		v.Add(contract.ParamUntil.String(), "must be after %s", contract.ParamSince)
	}
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.AuditLog(r.Context(), AuditQuery{Entity: e, Since: since, Until: until, Limit: n, Cursor: q.Cursor()})
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}

// timeQuery parses an RFC 3339 time parameter (any offset; stored times
// are UTC).
func timeQuery(v *api.Validator, q api.QueryValues, p service.QueryParam) time.Time {
	field := p.String()
	s := q.Get(p)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1970 || t.Year() > 9999 {
		v.Add(field, "must be an RFC 3339 time such as 2026-02-09T12:00:00Z")
		return time.Time{}
	}
	return t
}
