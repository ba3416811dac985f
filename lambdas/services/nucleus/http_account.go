package nucleus

import (
	"encoding/json"
	"net/http"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

func accountStatuses() []string {
	s := make([]string, len(AccountStatuses))
	for i, st := range AccountStatuses {
		s[i] = string(st)
	}
	return s
}

type createAccountRequest struct {
	AccountID   string `json:"account_id"`
	AccountName string `json:"account_name"`
	RoleARN     string `json:"role_arn"`
	// ExternalID is declared to be refused by name (refuseExternalID).
	ExternalID api.Optional[string] `json:"external_id"`
	Status     AccountStatus        `json:"status"`
}

func (h *handler) createAccount(w http.ResponseWriter, r *http.Request) error {
	var in createAccountRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	u := user(&v, r)
	checkAccountID(&v, "account_id", in.AccountID)
	checkName(&v, "account_name", in.AccountName)
	h.checkRole(&v, "role_arn", in.RoleARN, in.AccountID)
	refuseExternalID(&v, in.ExternalID.Set)
	if in.Status == "" {
		// New accounts are active unless the caller says otherwise.
		in.Status = AccountActive
	}
	v.OneOf("status", string(in.Status), accountStatuses()...)
	if err := v.Err(); err != nil {
		return err
	}
	a, err := h.store.CreateAccount(r.Context(), u, NewAccount{AccountID: in.AccountID, AccountName: in.AccountName, RoleARN: in.RoleARN, Status: in.Status})
	if err != nil {
		return api.About(err, in.AccountID)
	}
	w.Header().Set("Location", api.Location(contract.GetAccount, a.AccountID))
	// Shown once: a replay of this create answers without it.
	api.Secret(w, contract.AttrExternalID)
	api.WriteJSON(w, http.StatusCreated, a.Shown())
	return nil
}

func (h *handler) getAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathAccountID(r)
	if err != nil {
		return err
	}
	a, err := h.store.Account(r.Context(), id)
	return api.Reply(w, http.StatusOK, a, api.About(err, id))
}

type updateAccountRequest struct {
	AccountName api.Optional[string] `json:"account_name"`
	RoleARN     api.Optional[string] `json:"role_arn"`
	// ExternalID is declared to be refused by name (refuseExternalID).
	ExternalID       api.Optional[string]        `json:"external_id"`
	RotateExternalID api.Optional[bool]          `json:"rotate_external_id"`
	Status           api.Optional[AccountStatus] `json:"status"`
}

func (h *handler) updateAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathAccountID(r)
	if err != nil {
		return err
	}
	var in updateAccountRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	if !in.AccountName.Set && !in.RoleARN.Set && !in.ExternalID.Set && !in.RotateExternalID.Set && !in.Status.Set {
		return api.BadRequest("nothing to change; give at least one of account_name, role_arn, rotate_external_id, status")
	}
	var v api.Validator
	u := user(&v, r)
	refuseExternalID(&v, in.ExternalID.Set)
	rotate := in.RotateExternalID.Ptr(&v, "rotate_external_id")
	if rotate != nil && !*rotate {
		v.Add("rotate_external_id", "must be true when given (omit it to keep the external id)")
	}
	p := AccountPatch{
		AccountName:      in.AccountName.Ptr(&v, "account_name"),
		RoleARN:          in.RoleARN.Ptr(&v, "role_arn"),
		RotateExternalID: rotate != nil && *rotate,
		Status:           in.Status.Ptr(&v, "status"),
	}
	if p.AccountName != nil {
		checkName(&v, "account_name", *p.AccountName)
	}
	if p.RoleARN != nil {
		h.checkRole(&v, "role_arn", *p.RoleARN, id)
	}
	if p.Status != nil {
		v.OneOf("status", string(*p.Status), accountStatuses()...)
	}
	if err := v.Err(); err != nil {
		return err
	}
	a, err := h.store.UpdateAccount(r.Context(), u, id, p)
	if err == nil && p.RotateExternalID {
		// The rotation's answer is the one place the new id is shown.
		api.WriteJSON(w, http.StatusOK, a.Shown())
		return nil
	}
	return api.Reply(w, http.StatusOK, a, api.About(err, id))
}

func (h *handler) listAccounts(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	q := api.QueryOf(r)
	n := api.PageLimit(&v, q, 0, MaxPageSize)
	status := q.Get(contract.ParamStatus)
	if q.Has(contract.ParamStatus) {
		v.OneOf(contract.ParamStatus.String(), status, accountStatuses()...)
	}
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.Accounts(r.Context(), AccountQuery{Status: AccountStatus(status), Limit: n, Cursor: q.Cursor()})
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}

func (h *handler) accountResources(w http.ResponseWriter, r *http.Request) error {
	return pageUnder(w, r, pathAccountID, h.store.AccountResources)
}

// TestResult is the answer of POST /accounts/{id}/test.
type TestResult struct {
	AccountID string      `json:"account_id"`
	Status    AuditStatus `json:"status"`
	// TestedAt is the test's time, also its audit entry's timestamp.
	TestedAt string          `json:"tested_at"`
	EntryID  string          `json:"entry_id"`
	Details  json.RawMessage `json:"details"`
}

// testAccount assumes the account's role for real (STS AssumeRole with
// the external id) and asks STS who the session is; either failing is a
// FAIL result, not an error: the test ran and that is its finding.
func (h *handler) testAccount(w http.ResponseWriter, r *http.Request) error {
	id, u, err := target(r, pathAccountID)
	if err != nil {
		return err
	}
	if h.cloud == nil {
		return &api.Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "connection tests are not configured for this function"}
	}
	a, err := h.store.Account(r.Context(), id)
	if err != nil {
		return api.About(err, id)
	}
	status, details := StatusSuccess, map[string]any{"role_arn": a.RoleARN, "external_id_used": a.ExternalID != ""}
	role, err := h.cloud.Assume(r.Context(), a.RoleARN, a.ExternalID, SessionTest)
	if err == nil {
		details["assumed_role_arn"] = role.AssumedRoleARN
		var caller string
		if caller, err = h.cloud.CallerIdentity(r.Context(), role); err == nil {
			details["caller_arn"] = caller
		} else {
			details["call"] = "sts:GetCallerIdentity"
		}
	} else {
		details["call"] = "sts:AssumeRole"
	}
	if err != nil {
		status, details["error"] = StatusFail, DescribeError(err)
	}
	e, err := h.store.RecordTest(r.Context(), u, id, status, details)
	if err != nil {
		return api.About(err, id)
	}
	api.WriteJSON(w, http.StatusOK, TestResult{AccountID: id, Status: e.Status, TestedAt: e.Timestamp, EntryID: e.EntryID, Details: e.Details})
	return nil
}

func (h *handler) deleteAccount(w http.ResponseWriter, r *http.Request) error {
	return h.remove(w, r, pathAccountID, h.store.DeleteAccount)
}
