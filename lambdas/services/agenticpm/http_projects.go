package agenticpm

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

type createProjectRequest struct {
	Name             string                      `json:"name"`
	Description      api.Optional[string]        `json:"description"`
	Status           api.Optional[ProjectStatus] `json:"status"`
	Source           Source                      `json:"source"`
	SourceProjectKey string                      `json:"sourceProjectKey"`
	AutonomyLevel    AutonomyLevel               `json:"autonomyLevel"`
	Config           Doc                         `json:"config"`
}

func (h *handler) createProject(w http.ResponseWriter, r *http.Request) error {
	var in createProjectRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	text(&v, "name", in.Name, MaxNameChars)
	optText(&v, "description", in.Description, MaxTextChars)
	if in.Status.Present(&v, "status") {
		v.OneOf("status", string(in.Status.V), api.Strings(ProjectStatuses)...)
	}
	v.OneOf("source", string(in.Source), api.Strings(Sources)...)
	v.Identifier("sourceProjectKey", in.SourceProjectKey, MaxNameChars)
	v.OneOf("autonomyLevel", string(in.AutonomyLevel), api.Strings(AutonomyLevels)...)
	doc(&v, "config", in.Config, false, "object")
	if err := v.Err(); err != nil {
		return err
	}
	p, err := h.store.CreateProject(r.Context(), NewProject{
		Name: in.Name, Description: in.Description.V, Status: in.Status.V, Source: in.Source,
		SourceProjectKey: in.SourceProjectKey, AutonomyLevel: in.AutonomyLevel, Config: in.Config,
	})
	if err != nil {
		return err
	}
	created(w, api.Location(contract.GetProject, p.ID), p)
	return nil
}

func (h *handler) getProject(w http.ResponseWriter, r *http.Request) error {
	id, err := projectID(r)
	if err != nil {
		return err
	}
	p, err := h.store.GetProject(r.Context(), id)
	return api.Reply(w, http.StatusOK, p, err)
}

// updateProjectRequest is a merge patch: absent fields stay, a null
// description removes it, null elsewhere is refused.
type updateProjectRequest struct {
	Name             api.Optional[string]        `json:"name"`
	Description      api.Optional[string]        `json:"description"`
	Status           api.Optional[ProjectStatus] `json:"status"`
	Source           api.Optional[Source]        `json:"source"`
	SourceProjectKey api.Optional[string]        `json:"sourceProjectKey"`
	AutonomyLevel    api.Optional[AutonomyLevel] `json:"autonomyLevel"`
	Config           Doc                         `json:"config"`
}

func (h *handler) updateProject(w http.ResponseWriter, r *http.Request) error {
	id, err := projectID(r)
	if err != nil {
		return err
	}
	var in updateProjectRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	var patch ProjectPatch
	if in.Name.Present(&v, "name") {
		text(&v, "name", in.Name.V, MaxNameChars)
		patch.Name = &in.Name.V
	}
	if in.Description.Null {
		patch.ClearDescription = true
	} else if in.Description.Set {
		text(&v, "description", in.Description.V, MaxTextChars)
		patch.Description = &in.Description.V
	}
	if in.Status.Present(&v, "status") {
		v.OneOf("status", string(in.Status.V), api.Strings(ProjectStatuses)...)
		patch.Status = &in.Status.V
	}
	if in.Source.Present(&v, "source") {
		v.OneOf("source", string(in.Source.V), api.Strings(Sources)...)
		patch.Source = &in.Source.V
	}
	if in.SourceProjectKey.Present(&v, "sourceProjectKey") {
		v.Identifier("sourceProjectKey", in.SourceProjectKey.V, MaxNameChars)
		patch.SourceProjectKey = &in.SourceProjectKey.V
	}
	if in.AutonomyLevel.Present(&v, "autonomyLevel") {
		v.OneOf("autonomyLevel", string(in.AutonomyLevel.V), api.Strings(AutonomyLevels)...)
		patch.AutonomyLevel = &in.AutonomyLevel.V
	}
	doc(&v, "config", in.Config, false, "object")
	patch.Config = in.Config
	if err := v.Err(); err != nil {
		return err
	}
	if patch.empty() {
		return api.BadRequest("nothing to change; send at least one of name, description, status, source, sourceProjectKey, autonomyLevel, config")
	}
	p, err := h.store.UpdateProject(r.Context(), id, patch)
	return api.Reply(w, http.StatusOK, p, err)
}

func (h *handler) listProjects(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	q, after, limit := listParams(r, &v)
	status := q.Get(contract.ParamStatus)
	v.OneOf(contract.ParamStatus.String(), status, api.Strings(ProjectStatuses)...)
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.ListProjects(r.Context(), ProjectStatus(status), after, limit)
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}

func artefactPath(r *http.Request) (string, ArtefactType, error) {
	id, err := projectID(r)
	if err != nil {
		return "", "", err
	}
	var v api.Validator
	typ := pathPart(&v, r, contract.ParamType, api.Strings(ArtefactTypes)...)
	return id, ArtefactType(typ), v.Err()
}

func (h *handler) listArtefacts(w http.ResponseWriter, r *http.Request) error {
	id, err := projectID(r)
	if err != nil {
		return err
	}
	items, err := h.store.ListArtefacts(r.Context(), id)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, Page[Artefact]{Items: items})
	return nil
}

func (h *handler) getArtefact(w http.ResponseWriter, r *http.Request) error {
	id, typ, err := artefactPath(r)
	if err != nil {
		return err
	}
	a, err := h.store.GetArtefact(r.Context(), id, typ)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(a.Version))
	api.WriteJSON(w, http.StatusOK, a)
	return nil
}

type putArtefactRequest struct {
	Content         Doc               `json:"content"`
	ExpectedVersion api.Optional[int] `json:"expectedVersion"`
}

// maxVersion bounds a version a caller names: each write adds one, so no
// artefact gets near it, and a number a JSON client can hold exactly
// (2^53 - 1) is the most that means anything.
const maxVersion = 1<<53 - 1

func etag(version int) string { return `"` + strconv.Itoa(version) + `"` }

// expectedVersion reads the version a write expects from If-Match (an
// ETag of GET, e.g. "3") or the body; 0, or neither, means "create".
func expectedVersion(v *api.Validator, r *http.Request, body api.Optional[int]) int {
	fromBody := -1
	if body.Present(v, "expectedVersion") {
		if body.V < 0 || body.V > maxVersion {
			v.Add("expectedVersion", "must be 0 (create) or the current version (at most %d)", maxVersion)
		}
		fromBody = body.V
	}
	fromHeader := -1
	if h := r.Header.Get("If-Match"); h != "" {
		n, err := strconv.Atoi(strings.Trim(strings.TrimPrefix(h, "W/"), `"`))
		if err != nil || n < 1 || n > maxVersion {
			v.Add("If-Match", `must be the artefact's ETag, e.g. "3"`)
		}
		fromHeader = n
	}
	switch {
	case fromBody >= 0 && fromHeader >= 0 && fromBody != fromHeader:
		v.Add("expectedVersion", "is %d but If-Match says %d", fromBody, fromHeader)
	case fromHeader >= 0:
		return fromHeader
	case fromBody >= 0:
		return fromBody
	}
	return 0
}

func (h *handler) putArtefact(w http.ResponseWriter, r *http.Request) error {
	id, typ, err := artefactPath(r)
	if err != nil {
		return err
	}
	var in putArtefactRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	doc(&v, "content", in.Content, true, "object")
	expected := expectedVersion(&v, r, in.ExpectedVersion)
	if err := v.Err(); err != nil {
		return err
	}
	// The schema is checked once the document is known to be an object
	// DynamoDB can store, so its messages are about the artefact alone.
	validateContent(&v, h.content, typ, in.Content)
	if err := v.Err(); err != nil {
		return err
	}
	a, err := h.store.PutArtefact(r.Context(), id, typ, in.Content, expected)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(a.Version))
	if expected == 0 {
		created(w, api.Location(contract.GetArtefact, id, string(typ)), a)
		return nil
	}
	api.WriteJSON(w, http.StatusOK, a)
	return nil
}

// undoArtefact restores the previous version. It requires the version the
// client read, as If-Match (the route takes no body): undoing blind could
// throw away a write the client has not seen.
func (h *handler) undoArtefact(w http.ResponseWriter, r *http.Request) error {
	id, typ, err := artefactPath(r)
	if err != nil {
		return err
	}
	var v api.Validator
	expected := expectedVersion(&v, r, api.Optional[int]{})
	if expected == 0 && v.Err() == nil {
		v.Add("If-Match", `is required: the ETag of the version to undo, e.g. "3"`)
	}
	if err := v.Err(); err != nil {
		return err
	}
	a, err := h.store.UndoArtefact(r.Context(), id, typ, expected)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(a.Version))
	api.WriteJSON(w, http.StatusOK, a)
	return nil
}
