package agenticpm

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// Config configures NewHandler.
type Config struct {
	Table string
	fn.Common
	// EventBus and Events are where released actions go (PutEvents);
	// eventbus.NewConfig sets Events when EventBus is set.
	EventBus string
	Events   EventsAPI
	// CredentialsKey, Stage and KMS encrypt integration credentials
	// (decision 10); credentialsapi.New sets KMS when CredentialsKey is
	// set.
	CredentialsKey string
	Stage          string
	KMS            KMSAPI
}

// ConfigFromEnv reads the configuration (not the client) from getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	v, common, err := fn.Tables(contract.Name, getenv, contract.Table)
	if err != nil {
		return Config{}, err
	}
	return Config{Table: v[0], Common: common, EventBus: getenv(contract.EnvEventBus),
		CredentialsKey: getenv(contract.EnvCredentialsKey), Stage: getenv(service.EnvStage)}, nil
}

// NewConfig is the preamble every AgenticPM function shares (the table,
// the DynamoDB client, the variables). The functions that call other AWS
// services add their clients in the packages that bind them: the KMS
// client in credentialsapi, the EventBridge client in eventbus
// (decision 22).
func NewConfig(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (Config, error) {
	return fn.New(ctx, getenv, ConfigFromEnv, (*Config).SetClient, fn.Same[Config], opts...)
}

// storeFromConfig is the store of the API and of the release job.
func storeFromConfig(cfg Config, log *slog.Logger) *Store {
	store := NewStore(cfg.Client, cfg.Table, cfg.CursorKey)
	cfg.Pin(&store.now, &store.newID)
	store.events, store.bus, store.log = cfg.Events, cfg.EventBus, log
	store.kms, store.credentialsKey, store.stage = cfg.KMS, cfg.CredentialsKey, cfg.Stage
	return store
}

// NewHandler returns the API function's routes (contract.API; the rest
// of the service's API is NewActionsHandler's and
// NewCredentialsHandler's, decision 22); docs/schemas/agenticpm.md
// ("HTTP API") describes each route. content checks artefact content
// against its type's schema: the function's constructor,
// agenticpmapi.New, passes platform/bodyschema's
// (agenticpmapi.ContentSchemas).
func NewHandler(cfg Config, content ContentSchemas) http.Handler {
	if content == nil {
		panic("agenticpm: NewHandler without ContentSchemas (agenticpmapi.ContentSchemas binds them)")
	}
	r, h := newRouter(contract.API, cfg)
	h.content = content
	r.Handle(contract.CreateProject, h.createProject)
	r.Handle(contract.ListProjects, h.listProjects)
	r.Handle(contract.GetProject, h.getProject)
	r.Handle(contract.UpdateProject, h.updateProject)
	r.Handle(contract.ListArtefacts, h.listArtefacts)
	r.Handle(contract.GetArtefact, h.getArtefact)
	r.Handle(contract.PutArtefact, h.putArtefact)
	r.Handle(contract.UndoArtefact, h.undoArtefact)
	r.Handle(contract.RecordProjectEvent, h.recordProjectEvent)
	r.Handle(contract.ListProjectEvents, h.listProjectEvents)
	r.Handle(contract.RecordGlobalEvent, h.recordGlobalEvent)
	r.Handle(contract.ListEvents, h.listEvents)
	r.Handle(contract.CreateEscalation, h.createEscalation)
	r.Handle(contract.ListProjectEscalations, h.listProjectEscalations)
	r.Handle(contract.GetEscalation, h.getEscalation)
	r.Handle(contract.Decide, h.decide)
	r.Handle(contract.SupersedeEscalation, h.supersede)
	r.Handle(contract.ListEscalations, h.listEscalations)
	r.Handle(contract.PutCheckpoint, h.putCheckpoint)
	r.Handle(contract.GetCheckpoint, h.getCheckpoint)
	r.Handle(contract.PutAgentConfig, h.putAgentConfig)
	r.Handle(contract.GetAgentConfig, h.getAgentConfig)
	r.Handle(contract.ListAgentConfig, h.listAgentConfig)
	return api.Instrument(h.log, r.Done())
}

// NewActionsHandler returns the hold queue's routes (contract.Actions):
// its function alone has the EventBridge client a release puts the action
// on the bus with (cfg.Events; eventbus.NewActionsAPI sets it).
func NewActionsHandler(cfg Config) http.Handler {
	r, h := newRouter(contract.Actions, cfg)
	r.Handle(contract.RecordAction, h.recordAction)
	r.Handle(contract.ListActions, h.listActions)
	r.Handle(contract.ReleaseAction, h.releaseAction)
	r.Handle(contract.CancelAction, h.cancelAction)
	r.Handle(contract.MarkActionExecuted, h.markExecuted)
	r.Handle(contract.ListHeldActions, h.listHeldActions)
	return api.Instrument(h.log, r.Done())
}

// NewCredentialsHandler returns the credentials routes
// (contract.Credentials): its function alone has the KMS client
// credentials are sealed with (cfg.KMS; credentialsapi.New sets it).
func NewCredentialsHandler(cfg Config) http.Handler {
	r, h := newRouter(contract.Credentials, cfg)
	r.Handle(contract.PutIntegration, h.putIntegration)
	r.Handle(contract.GetIntegration, h.getIntegration)
	return api.Instrument(h.log, r.Done())
}

// newRouter is what the three handlers share: the function's logger
// (named by it, so its metrics carry its name), the store and the router
// with idempotency keys kept in the table.
func newRouter(f service.Function, cfg Config) (*api.Router, *handler) {
	log := fn.Logger(f.Name, cfg.Client, cfg.Logger)
	h := &handler{store: storeFromConfig(cfg, log), log: log}
	keys := api.IdempotencyTable{Client: cfg.Client, Name: cfg.Table, PartitionKey: contract.AttrPK, SortKey: contract.AttrSK, TTL: contract.AttrTTL, Now: cfg.Now}
	return api.NewRouter(f).Around(keys.Middleware), h
}

type handler struct {
	store   *Store
	content ContentSchemas
	log     *slog.Logger
}

// projectID returns the {id} path value, a canonical UUID.
func projectID(r *http.Request) (string, error) { return api.PathUUID(r, contract.ParamID, "project") }

// pathPart validates a caller-named key part of the path (an enum value or
// a name): unlike a malformed id it says what is wrong with it.
func pathPart(v *api.Validator, r *http.Request, p service.PathParam, allowed ...string) string {
	s := api.PathValue(r, p)
	if len(allowed) > 0 {
		v.OneOf(p.String(), s, allowed...)
	} else if !validKeyPart(s) {
		v.Add(p.String(), "must be 1 to %d characters of A-Z, a-z, 0-9, '_', '.', ':' and '-', starting with a letter or digit", MaxIdentifierChars)
	}
	return s
}

// listParams reads limit and cursor. The router has refused any query
// parameter the route's contract does not list.
func listParams(r *http.Request, v *api.Validator) (q api.QueryValues, after string, limit int) {
	q = api.QueryOf(r)
	return q, q.Cursor(), api.PageLimit(v, q, DefaultPageSize, MaxPageSize)
}

func text(v *api.Validator, field, s string, maxChars int) { v.Text(field, s, 1, maxChars) }

func optText(v *api.Validator, field string, o api.Optional[string], maxChars int) {
	if o.Present(v, field) {
		text(v, field, o.V, maxChars)
	}
}

// typeName checks an open-set type such as eventType or actionType.
func typeName(v *api.Validator, field, s string) {
	switch {
	case s == "":
		v.Add(field, "is required")
	case len(s) > MaxIdentifierChars:
		v.Add(field, "must be at most %d characters (got %d)", MaxIdentifierChars, len(s))
	case !typeNamePattern.MatchString(s):
		v.Add(field, "must be lower_snake_case (a-z, 0-9, '_'), e.g. signal_detected")
	}
}

// doc checks a JSON document field of the given kinds ("object",
// "array", …); absent or null is "is required" when required, else null
// is refused and absent is fine. It also converts it, so a document
// DynamoDB would refuse (too deep, unstorable number) is a 400 here and
// not a 500 at the write.
func doc(v *api.Validator, field string, d Doc, required bool, kinds ...string) {
	switch {
	case d == nil && !required:
		return
	case d.IsNull() && required:
		v.Add(field, "is required; a JSON %s", strings.Join(kinds, " or "))
		return
	case d.IsNull():
		v.Add(field, "must not be null; omit it instead")
		return
	case !slices.Contains(kinds, d.Kind()):
		v.Add(field, "must be a JSON %s, not a JSON %s", strings.Join(kinds, " or "), d.Kind())
		return
	}
	if _, err := d.AttributeValue(); err != nil {
		v.Add(field, "%s", err.Error())
	}
}

// timestamp checks an RFC 3339 time and returns it as a Timestamp.
func timestamp(v *api.Validator, field string, o api.Optional[string]) string {
	if !o.Present(v, field) {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, o.V)
	if err != nil {
		v.Add(field, "must be an RFC 3339 timestamp, e.g. 2026-02-04T10:30:00Z")
		return ""
	}
	return Timestamp(t)
}

func created(w http.ResponseWriter, location string, v any) {
	if location != "" {
		// Relative, so it resolves under whatever prefix the API is
		// mounted at (/agenticpm locally, a stage path in API Gateway).
		w.Header().Set("Location", location)
	}
	api.WriteJSON(w, http.StatusCreated, v)
}
