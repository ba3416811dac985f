package agenticpm

import (
	"net/http"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

func checkpointPath(r *http.Request) (id, integration, k string, err error) {
	if id, err = projectID(r); err != nil {
		return "", "", "", err
	}
	var v api.Validator
	integration = pathPart(&v, r, contract.ParamIntegration)
	k = pathPart(&v, r, contract.ParamKey)
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
	return api.Reply(w, http.StatusOK, c, err)
}

func (h *handler) getCheckpoint(w http.ResponseWriter, r *http.Request) error {
	id, integration, k, err := checkpointPath(r)
	if err != nil {
		return err
	}
	c, err := h.store.GetCheckpoint(r.Context(), id, integration, k)
	return api.Reply(w, http.StatusOK, c, err)
}

func integrationName(r *http.Request) (Integration, error) {
	var v api.Validator
	name := pathPart(&v, r, contract.ParamName, api.Strings(Integrations)...)
	return Integration(name), v.Err()
}

type integrationRequest struct {
	// Config is the plaintext configuration (credentials), a JSON object
	// of at most MaxConfigBytes: the service encrypts it (decision 10).
	Config Doc `json:"config"`
	// ConfigEncrypted is refused since issue 17, with the fix named.
	ConfigEncrypted api.Optional[string] `json:"configEncrypted"`
	Status          IntegrationStatus    `json:"status"`
	LastHealthCheck api.Optional[string] `json:"lastHealthCheck"`
}

// putIntegration stores credentials, encrypted by the service. Nothing
// here logs the body, and validation messages never quote config.
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
	if in.ConfigEncrypted.Set {
		v.Add("configEncrypted", "is no longer accepted: send the plaintext as config (a JSON object) over TLS; the service encrypts it with the stage's KMS key")
	}
	switch {
	case in.Config == nil || in.Config.IsNull():
		v.Add("config", "is required: the integration's credentials as a JSON object (plaintext; stored only encrypted)")
	case in.Config.Kind() != "object":
		v.Add("config", "must be a JSON object, not a JSON %s", in.Config.Kind())
	case len(in.Config) > MaxConfigBytes:
		v.Add("config", "must be at most %d bytes (KMS encrypts at most that much; got %d)", MaxConfigBytes, len(in.Config))
	}
	v.OneOf("status", string(in.Status), api.Strings(IntegrationStatuses)...)
	health := timestamp(&v, "lastHealthCheck", in.LastHealthCheck)
	if err := v.Err(); err != nil {
		return err
	}
	c, err := h.store.PutIntegration(r.Context(), name, IntegrationUpdate{Config: in.Config,
		Status: in.Status, LastHealthCheck: health})
	return api.Reply(w, http.StatusOK, c, err)
}

func (h *handler) getIntegration(w http.ResponseWriter, r *http.Request) error {
	name, err := integrationName(r)
	if err != nil {
		return err
	}
	c, err := h.store.GetIntegration(r.Context(), name)
	return api.Reply(w, http.StatusOK, c, err)
}

type agentConfigRequest struct {
	Value Doc `json:"value"`
}

func (h *handler) putAgentConfig(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	k := pathPart(&v, r, contract.ParamKey)
	if err := v.Err(); err != nil {
		return err
	}
	var in agentConfigRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	doc(&v, "value", in.Value, true, "string", "number", "object")
	if r, ok := numericSettings[k]; ok && v.Err() == nil {
		if _, ok := numberIn(in.Value, r[0], r[1]); !ok {
			v.Add("value", "must be a number from %g to %g for %s (got %s)", r[0], r[1], k, api.Truncate(string(in.Value), 40))
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	c, err := h.store.PutAgentConfig(r.Context(), k, in.Value)
	return api.Reply(w, http.StatusOK, c, err)
}

func (h *handler) getAgentConfig(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	k := pathPart(&v, r, contract.ParamKey)
	if err := v.Err(); err != nil {
		return err
	}
	c, err := h.store.GetAgentConfig(r.Context(), k)
	return api.Reply(w, http.StatusOK, c, err)
}

func (h *handler) listAgentConfig(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	_, after, limit := listParams(r, &v)
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.ListAgentConfig(r.Context(), after, limit)
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}
