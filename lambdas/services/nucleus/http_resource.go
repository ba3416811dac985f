package nucleus

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

type attachResourceRequest struct {
	ResourceARN  string       `json:"resource_arn"`
	ResourceType ResourceType `json:"resource_type"`
	Region       string       `json:"region"`
	AccountID    string       `json:"account_id"`
}

// attachResource answers 201 when the resource is newly attached and 200
// when it already was (PUT is idempotent; nothing is written then).
func (h *handler) attachResource(w http.ResponseWriter, r *http.Request) error {
	id, err := pathScheduleID(r)
	if err != nil {
		return err
	}
	var in attachResourceRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	u := user(&v, r)
	checkResource(&v, NewResource(in))
	if err := v.Err(); err != nil {
		return err
	}
	res, created, err := h.store.AttachResource(r.Context(), u, id, NewResource(in))
	if errors.Is(err, ErrAccountNotFound) {
		// The URL names the schedule; the account is a reference in the
		// body, so its absence is a conflict with the stored state, not a
		// missing target.
		return &api.Error{Status: http.StatusConflict, Code: api.CodeConflict, Err: err,
			Message: fmt.Sprintf("account_id: account %q is not registered; POST /accounts first", in.AccountID)}
	}
	if err != nil {
		return api.About(err, id)
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	api.WriteJSON(w, status, res)
	return nil
}

// detachResource takes the ARN URL-escaped (arn%3Aaws%3Aec2…%2Finstance%2F…)
// or, since the wildcard is greedy, with its slashes as they are.
func (h *handler) detachResource(w http.ResponseWriter, r *http.Request) error {
	id, err := pathScheduleID(r)
	if err != nil {
		return err
	}
	arn := api.PathValue(r, contract.ParamARN)
	var v api.Validator
	u := user(&v, r)
	if err := v.Err(); err != nil {
		return err
	}
	if len(arn) > MaxResourceARNBytes || !resourceARNPattern().MatchString(arn) {
		return api.NotFound("resource %q is not attached to schedule %q", api.Truncate(arn, 256), id)
	}
	err = h.store.DetachResource(r.Context(), u, id, arn)
	if errors.Is(err, ErrResourceNotFound) {
		return &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Err: err,
			Message: fmt.Sprintf("resource %q is not attached to schedule %q", arn, id)}
	}
	if err != nil {
		return api.About(err, id)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
