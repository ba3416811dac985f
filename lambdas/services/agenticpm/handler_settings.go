package agenticpm

import (
	"encoding/base64"
	"net/http"

	"github.com/dynastack/dynastack/lambdas/platform/api"
)

func checkpointPath(r *http.Request) (id, integration, k string, err error) {
	if id, err = projectID(r); err != nil {
		return "", "", "", err
	}
	var v api.Validator
	integration = pathPart(&v, r, "integration")
	k = pathPart(&v, r, "key")
	return id, integration, k, v.Err()
}

type checkpointRequest struct {
	CheckpointValue string `json:"checkpointValue"`
}

func (h *handler) putCheckpoint(w http.ResponseWriter, r *http.Request) error {
	id, integration, k, err := checkpointPath(r)
	if err != nil {
		return err
	}
	var in checkpointRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	text(&v, "checkpointValue", in.CheckpointValue, MaxCheckpointValueChars)
	if err := v.Err(); err != nil {
		return err
	}
	c, err := h.store.PutCheckpoint(r.Context(), id, integration, k, in.CheckpointValue)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h *handler) getCheckpoint(w http.ResponseWriter, r *http.Request) error {
	id, integration, k, err := checkpointPath(r)
	if err != nil {
		return err
	}
	c, err := h.store.GetCheckpoint(r.Context(), id, integration, k)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, c)
	return nil
}

func integrationName(r *http.Request) (Integration, error) {
	var v api.Validator
	name := pathPart(&v, r, "name", strs(Integrations)...)
	return Integration(name), v.Err()
}

type integrationRequest struct {
	ConfigEncrypted string               `json:"configEncrypted"`
	Status          IntegrationStatus    `json:"status"`
	LastHealthCheck api.Optional[string] `json:"lastHealthCheck"`
}

// putIntegration stores credentials. Nothing here logs the body, and
// validation messages never quote configEncrypted.
func (h *handler) putIntegration(w http.ResponseWriter, r *http.Request) error {
	name, err := integrationName(r)
	if err != nil {
		return err
	}
	var in integrationRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	switch {
	case in.ConfigEncrypted == "":
		v.Add("configEncrypted", "is required; the KMS ciphertext, base64")
	case len(in.ConfigEncrypted) > MaxConfigEncryptedChars:
		v.Add("configEncrypted", "must be at most %d characters (got %d)", MaxConfigEncryptedChars, len(in.ConfigEncrypted))
	default:
		if _, err := base64.StdEncoding.DecodeString(in.ConfigEncrypted); err != nil {
			v.Add("configEncrypted", "must be standard base64 (with padding)")
		}
	}
	v.OneOf("status", string(in.Status), strs(IntegrationStatuses)...)
	health := timestamp(&v, "lastHealthCheck", in.LastHealthCheck)
	if err := v.Err(); err != nil {
		return err
	}
	c, err := h.store.PutIntegration(r.Context(), name, IntegrationUpdate{ConfigEncrypted: in.ConfigEncrypted,
		Status: in.Status, LastHealthCheck: health})
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h *handler) getIntegration(w http.ResponseWriter, r *http.Request) error {
	name, err := integrationName(r)
	if err != nil {
		return err
	}
	c, err := h.store.GetIntegration(r.Context(), name)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, c)
	return nil
}

type agentConfigRequest struct {
	Value Doc `json:"value"`
}

func (h *handler) putAgentConfig(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	k := pathPart(&v, r, "key")
	if err := v.Err(); err != nil {
		return err
	}
	var in agentConfigRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	doc(&v, "value", in.Value, true, "string", "number", "object")
	if err := v.Err(); err != nil {
		return err
	}
	c, err := h.store.PutAgentConfig(r.Context(), k, in.Value)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h *handler) getAgentConfig(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	k := pathPart(&v, r, "key")
	if err := v.Err(); err != nil {
		return err
	}
	c, err := h.store.GetAgentConfig(r.Context(), k)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h *handler) listAgentConfig(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	_, after, limit := listParams(r, &v)
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.ListAgentConfig(r.Context(), after, limit)
	if err != nil {
		return api.CursorHint(err, cursorHint)
	}
	api.WriteJSON(w, http.StatusOK, page)
	return nil
}
