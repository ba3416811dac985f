package rezagent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Config configures NewHandler.
type Config struct {
	Table string
	Stage string
	fn.Common
	// ScanBudget bounds the items one listing reads while skipping expired
	// messages; 0 means DefaultScanBudget.
	ScanBudget int
	// Topic is the SNS topic a created message is published to, through
	// SNS; without a topic, created messages wait for the scheduler's
	// republish (or a client's PATCH).
	Topic string
	SNS   SNSAPI
	// TypeIndex: the table has message_type-created_date-index, so the
	// API lists and counts by message type (contract.EnvTypeIndex).
	TypeIndex bool
}

// ConfigFromEnv reads the configuration (not the client) from getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	v, common, err := fn.Tables(contract.Name, getenv, contract.Messages)
	if err != nil {
		return Config{}, err
	}
	table, stage := v[0], getenv(service.EnvStage)
	if !slices.Contains(Stages, stage) {
		return Config{}, fmt.Errorf("rezagent: %s is %q; want one of %s", service.EnvStage, stage, strings.Join(Stages, ", "))
	}
	cfg := Config{Table: table, Stage: stage, Common: common, Topic: getenv(contract.EnvTopicArn)}
	switch idx := getenv(contract.EnvTypeIndex); idx {
	case "":
	case contract.IndexMessageTypeCreatedDate:
		cfg.TypeIndex = true
	default:
		return Config{}, fmt.Errorf("rezagent: %s is %q; want %s (the stage deploys the index) or nothing", contract.EnvTypeIndex, idx, contract.IndexMessageTypeCreatedDate)
	}
	return cfg, nil
}

// New builds the service from the environment, with newSNS making the
// SNS client it publishes with: publisher.NewAPI, the constructor of the
// API function (services/rezagent/publisher), passes publisher.NewSNS.
func New(ctx context.Context, getenv func(string) string, newSNS SNSConstructor, opts ...ddb.Option) (http.Handler, error) {
	// The API publishes what it creates when the stack gives it a topic.
	withSNS := func(getenv func(string) string) (Config, error) {
		cfg, err := ConfigFromEnv(getenv)
		if err == nil && cfg.Topic != "" {
			cfg.SNS, err = newSNS(ctx, getenv)
		}
		return cfg, err
	}
	return fn.New(ctx, getenv, withSNS, (*Config).SetClient, NewHandler, opts...)
}

// NewHandler returns the HTTP API (routes in the package documentation).
func NewHandler(cfg Config) http.Handler {
	if !slices.Contains(Stages, cfg.Stage) {
		panic(fmt.Sprintf("rezagent: Config.Stage %q is not one of %s", cfg.Stage, strings.Join(Stages, ", ")))
	}
	log := fn.Logger(contract.Name, cfg.Client, cfg.Logger)
	store := storeFromConfig(cfg)
	h := &handler{store: store, log: log}
	if cfg.Topic != "" && cfg.SNS != nil {
		h.pub = NewPublisher(cfg.SNS, cfg.Topic, store)
	}
	keys := api.IdempotencyTable{Client: cfg.Client, Name: cfg.Table, PartitionKey: contract.AttrMessageID, TTL: contract.AttrTTL, Now: cfg.Now}
	r := api.NewRouter(contract.API).Around(keys.Middleware)
	r.Handle(contract.CreateMessage, h.create)
	r.Handle(contract.ListMessages, h.list)
	r.Handle(contract.GetMessage, h.get)
	r.Handle(contract.SetStatus, h.setStatus)
	r.Handle(contract.Metrics, h.metrics)
	return api.Instrument(log, r.Done())
}

type handler struct {
	store *Store
	pub   *Publisher // nil: created messages are not published
	log   *slog.Logger
}

// storeFromConfig is the store of every rez_agent function.
func storeFromConfig(cfg Config) *Store {
	store := NewStore(cfg.Client, cfg.Table, cfg.Stage, cfg.CursorKey)
	cfg.Pin(&store.now, &store.newID)
	if cfg.ScanBudget > 0 {
		store.scanBudget = cfg.ScanBudget
	}
	store.typeIndex = cfg.TypeIndex
	return store
}

type createRequest struct {
	MessageType string          `json:"message_type"`
	CreatedBy   string          `json:"created_by"`
	Payload     json.RawMessage `json:"payload"`
}

func (h *handler) create(w http.ResponseWriter, r *http.Request) error {
	var in createRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	v.Identifier("message_type", in.MessageType, MaxMessageTypeLen)
	v.Identifier("created_by", in.CreatedBy, MaxCreatedByLen)
	v.MaxBytes("created_by", in.CreatedBy, MaxCreatedByLen)
	var payload Payload
	switch raw := strings.TrimSpace(string(in.Payload)); {
	case raw == "" || raw == "null":
		v.Add("payload", "is required: a JSON object")
	case raw[0] != '{':
		v.Add("payload", "must be a JSON object")
	default:
		var err error
		if payload, err = ParsePayload(in.Payload); err != nil {
			v.Add("payload", "must be a JSON object")
		}
		for _, p := range checkPayload(in.MessageType, payload, 10) {
			v.Add(p.path, "%s", p.msg)
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	m, err := h.store.Create(r.Context(), NewMessage{MessageType: in.MessageType, CreatedBy: in.CreatedBy, Payload: payload, CorrelationID: correlationID(r)})
	if err != nil {
		return err
	}
	if h.pub != nil {
		// The message is stored: a failed publish is not the caller's
		// failure. It stays created, and the scheduler's next run
		// republishes it (docs/schemas/rezagent.md, "Pipeline").
		published, err := h.pub.Publish(r.Context(), m)
		if err != nil {
			h.log.WarnContext(r.Context(), "publish failed; the scheduler will republish", "message_id", m.MessageID, "error", err.Error())
		}
		m = published
	}
	// Relative, so it resolves under whatever prefix the API is mounted at.
	w.Header().Set("Location", api.Location(contract.GetMessage, m.MessageID))
	api.WriteJSON(w, http.StatusCreated, m)
	return nil
}

// correlationID is the request's correlation id (api.Instrument: the
// request id, never the client's X-Correlation-Id, which the request's
// lines carry as client_correlation_id), which the message carries through
// the pipeline and every function logs.
func correlationID(r *http.Request) string {
	if id := logx.CorrelationID(r.Context()); id != "" {
		return id
	}
	return logx.RequestID(r.Context())
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) error {
	id, err := messageID(r)
	if err != nil {
		return err
	}
	m, err := h.store.Get(r.Context(), id)
	return api.Reply(w, http.StatusOK, m, api.About(err, id))
}

type statusRequest struct {
	Status         Status  `json:"status"`
	ErrorMessage   *string `json:"error_message"`
	NotificationID *string `json:"notification_id"`
}

// targets are the statuses a change may name; created is only ever the
// initial status.
var targets = []string{string(StatusQueued), string(StatusProcessing), string(StatusCompleted), string(StatusFailed)}

func (h *handler) setStatus(w http.ResponseWriter, r *http.Request) error {
	id, err := messageID(r)
	if err != nil {
		return err
	}
	var in statusRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	v.OneOf("status", string(in.Status), targets...)
	ch := StatusChange{To: in.Status}
	switch {
	case in.Status == StatusFailed && in.ErrorMessage == nil:
		v.Add("error_message", "is required with status failed")
	case in.Status == StatusFailed:
		v.Text("error_message", *in.ErrorMessage, 1, MaxErrorMessageChars)
		v.MaxBytes("error_message", *in.ErrorMessage, MaxErrorMessageBytes)
		ch.ErrorMessage = *in.ErrorMessage
	case in.ErrorMessage != nil:
		v.Add("error_message", "is only allowed with status failed")
	}
	switch {
	case in.NotificationID != nil && in.Status != StatusCompleted:
		v.Add("notification_id", "is only allowed with status completed")
	case in.NotificationID != nil:
		v.Identifier("notification_id", *in.NotificationID, MaxNotificationIDLen)
		v.MaxBytes("notification_id", *in.NotificationID, MaxNotificationIDLen)
		ch.NotificationID = *in.NotificationID
	}
	if err := v.Err(); err != nil {
		return err
	}
	m, err := h.store.SetStatus(r.Context(), id, ch)
	return api.Reply(w, http.StatusOK, m, api.About(err, id))
}

// parseTime accepts RFC 3339 (any precision and offset) or a bare date,
// which means midnight UTC.
func parseTime(v *api.Validator, field, s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			// Timestamps are fixed-width: years outside 4 digits (after
			// rounding and offsets) would sort wrongly.
			if u := t.UTC(); u.Year() < 1 || u.Year() > 9998 {
				break
			}
			return t
		}
	}
	v.Add(field, "must be an RFC 3339 time (2025-10-21T14:30:00Z) or a date (2025-10-21)")
	return time.Time{}
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	p := api.QueryOf(r)
	var q Query
	if st := p.Get(contract.ParamStage); p.Has(contract.ParamStage) && st != h.store.stage {
		if slices.Contains(Stages, st) {
			v.Add(contract.ParamStage.String(), "this deployment serves stage %s; messages of %s are in that stage's deployment", h.store.stage, st)
		} else {
			v.Add(contract.ParamStage.String(), "must be %s (one of %s, served by separate deployments)", h.store.stage, strings.Join(Stages, ", "))
		}
	}
	if st := p.Get(contract.ParamStatus); p.Has(contract.ParamStatus) {
		v.OneOf(contract.ParamStatus.String(), st, api.Strings(Statuses)...)
		q.Status = Status(st)
	}
	if p.Has(contract.ParamMessageType) {
		q.Type = messageType(&v, p.Get(contract.ParamMessageType))
		if q.Status != "" {
			v.Add(contract.ParamMessageType.String(), "list by status or by message type, not both")
		}
	}
	q.From = parseTime(&v, contract.ParamFrom.String(), p.Get(contract.ParamFrom))
	q.To = parseTime(&v, contract.ParamTo.String(), p.Get(contract.ParamTo))
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		v.Add(contract.ParamTo.String(), "must be after %s", contract.ParamFrom)
	}
	q.Limit = api.PageLimit(&v, p, 0, MaxPageSize)
	q.Cursor = p.Cursor()
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.List(r.Context(), q)
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}

func (h *handler) metrics(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	p := api.QueryOf(r)
	now := h.store.now()
	since := now.Add(-24 * time.Hour)
	if s := p.Get(contract.ParamSince); p.Has(contract.ParamSince) {
		if s == "" {
			v.Add(contract.ParamSince.String(), "must not be empty")
		} else if since = parseTime(&v, contract.ParamSince.String(), s); since.After(now) {
			v.Add(contract.ParamSince.String(), "must not be in the future")
		}
	}
	typ := ""
	if p.Has(contract.ParamMessageType) {
		typ = messageType(&v, p.Get(contract.ParamMessageType))
	}
	if err := v.Err(); err != nil {
		return err
	}
	if typ != "" {
		m, err := h.store.TypeMetrics(r.Context(), since, typ)
		return api.Reply(w, http.StatusOK, m, err)
	}
	m, err := h.store.Metrics(r.Context(), since)
	return api.Reply(w, http.StatusOK, m, err)
}

// messageType validates a ?message_type= value as create validates the
// field.
func messageType(v *api.Validator, s string) string {
	v.Identifier(contract.ParamMessageType.String(), s, MaxMessageTypeLen)
	return s
}

// messageID returns the path id, a canonical UUID: v4 from the API, v5
// from the scheduler.
func messageID(r *http.Request) (string, error) { return api.PathUUID(r, contract.ParamID, "message") }
