package nucleus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/cursor"
	"github.com/dynastack/dynastack/lambdas/platform/service"
)

// Environment variables of the service.
const (
	// EnvAppTable names the app table (NucleusAppTable-<stage>); CDK sets
	// it with Table.Environment (constructs/nucleus.EnvAppTableName).
	EnvAppTable = "NUCLEUS_APP_TABLE"
	// EnvAuditTable names the audit table (NucleusAuditTable-<stage>).
	EnvAuditTable = "NUCLEUS_AUDIT_TABLE"
	// EnvCursorKey optionally sets the key that signs list cursors (any
	// string). Without it the key is derived from the table names: still
	// tamper-evident and bound to the query, but not secret.
	EnvCursorKey = cursor.EnvKey
)

// HeaderUserID names the user of a write when API Gateway has no IAM
// caller for the request (local runs, tests, a trusted front end).
const HeaderUserID = "X-User-Id"

// Config configures NewHandler.
type Config struct {
	Tables    Tables
	CursorKey []byte
	// Client is required; New sets it from the environment.
	Client API
	// Logger defaults to slog.Default (the mains install a logx logger).
	Logger *slog.Logger
	// Now, NewID and NewEntryID default to time.Now, random UUIDs and
	// ULIDs; tests pin them.
	Now        func() time.Time
	NewID      func() string
	NewEntryID func(time.Time) string
}

// ConfigFromEnv reads the configuration (not the client) from getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	v, err := service.Required("nucleus", getenv,
		service.Var{Name: EnvAppTable, Names: "NucleusAppTable-<stage>"},
		service.Var{Name: EnvAuditTable, Names: "NucleusAuditTable-<stage>"})
	if err != nil {
		return Config{}, err
	}
	t := Tables{App: v[0], Audit: v[1]}
	key := cursor.KeyFromEnv(getenv, "dynastack/nucleus/cursor/"+t.App+"/"+t.Audit)
	return Config{Tables: t, CursorKey: key}, nil
}

// New builds the service from the environment: the constructor the service
// registry and the Lambda main use.
func New(ctx context.Context, getenv func(string) string) (http.Handler, error) {
	return service.New(ctx, getenv, ConfigFromEnv, (*Config).setClient, NewHandler)
}

func (c *Config) setClient(client API) { c.Client = client }

// NewHandler returns the HTTP API (docs/schemas/nucleus.md, "HTTP API").
// infra/stacks deploys the same routes (test/e2e compares the two); Go's
// greedy {arn...} is API Gateway's {arn+}.
func NewHandler(cfg Config) http.Handler {
	log := service.Logger("nucleus", cfg.Client, cfg.Logger)
	store := NewStore(cfg.Client, cfg.Tables, cfg.CursorKey)
	if cfg.Now != nil {
		store.now = cfg.Now
	}
	if cfg.NewID != nil {
		store.newID = cfg.NewID
	}
	if cfg.NewEntryID != nil {
		store.newEntryID = cfg.NewEntryID
	}
	h := &handler{store: store}
	r := api.NewRouter()
	r.Handle("POST /accounts", h.createAccount)
	r.Handle("GET /accounts", h.listAccounts, "status", "limit", "cursor")
	r.Handle("GET /accounts/{id}", h.getAccount)
	r.Handle("PATCH /accounts/{id}", h.updateAccount)
	r.Handle("GET /accounts/{id}/resources", h.accountResources, "limit", "cursor")
	r.Handle("POST /schedules", h.createSchedule)
	r.Handle("GET /schedules", h.listSchedules, "limit", "cursor")
	r.Handle("GET /schedules/{id}", h.getSchedule, "limit", "cursor")
	r.Handle("PATCH /schedules/{id}", h.updateSchedule)
	r.Handle("PUT /schedules/{id}/resources", h.attachResource)
	r.Handle("DELETE /schedules/{id}/resources/{arn...}", h.detachResource)
	r.Handle("POST /audit", h.recordExecution)
	r.Handle("GET /audit", h.timeline, "since", "until", "limit", "cursor")
	r.Handle("GET /audit/global", h.globalLog, "since", "until", "limit", "cursor")
	r.Handle("GET /audit/{entityType}/{id}", h.entityLog, "since", "until", "limit", "cursor")
	return api.Instrument(log, r)
}

type handler struct {
	store *Store
}

// user returns who makes a write, for the audit log. Behind API Gateway
// with IAM authorization the caller's ARN is authoritative and the header
// is ignored: a client cannot sign as one principal and claim another.
// Elsewhere the X-User-Id header is required.
func user(v *api.Validator, r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok &&
		rc.Authorizer != nil && rc.Authorizer.IAM != nil && rc.Authorizer.IAM.UserARN != "" {
		return rc.Authorizer.IAM.UserARN
	}
	id := r.Header.Get(HeaderUserID)
	if id == "" {
		v.Add(HeaderUserID, "header is required: the user making the change, recorded in the audit log")
		return ""
	}
	v.Identifier(HeaderUserID, id, MaxUserIDBytes)
	v.MaxBytes(HeaderUserID, id, MaxUserIDBytes)
	return id
}

// optional is a PATCH field: absent, null, or a value. null is refused
// rather than read as "absent", so a client cannot believe it cleared a
// field.
type optional[T any] struct {
	Set, Null bool
	V         T
}

func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.V)
}

// ptr returns the value of a set field, nil for an absent one, and records
// null as invalid.
func ptr[T any](v *api.Validator, field string, o optional[T]) *T {
	if o.Null {
		v.Add(field, "must not be null; omit the field to leave it unchanged")
		return nil
	}
	if !o.Set {
		return nil
	}
	return &o.V
}

// limit parses the optional page size.
func limit(v *api.Validator, q url.Values) int {
	s := q.Get("limit")
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxPageSize {
		v.Add("limit", "must be a whole number from 1 to %d", MaxPageSize)
		return 0
	}
	return n
}

// pathAccountID returns the path's account id. Anything but 12 digits
// cannot name an account: 404 without a DynamoDB call.
func pathAccountID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !ValidAccountID(id) {
		return "", api.NotFound("account %q not found", api.Truncate(id, 64))
	}
	return id, nil
}

// pathScheduleID returns the path's schedule id, a canonical UUID.
func pathScheduleID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !validScheduleID(id) {
		return "", api.NotFound("schedule %q not found", api.Truncate(id, 64))
	}
	return id, nil
}

// apiError maps store errors to HTTP errors; anything unknown stays a 500.
func apiError(err error, id string) error {
	switch {
	case errors.Is(err, ErrAccountNotFound):
		return &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Message: fmt.Sprintf("account %q not found", id), Err: err}
	case errors.Is(err, ErrScheduleNotFound):
		return &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Message: fmt.Sprintf("schedule %q not found", id), Err: err}
	case errors.Is(err, ErrAccountExists):
		return &api.Error{Status: http.StatusConflict, Code: api.CodeConflict, Message: fmt.Sprintf("account %q is already registered", id), Err: err}
	case errors.Is(err, ErrConcurrentUpdate):
		return &api.Error{Status: http.StatusConflict, Code: api.CodeConflict, Message: "the item was changed by a concurrent request; retry", Err: err}
	case errors.Is(err, ErrTooLarge):
		return &api.Error{Status: http.StatusRequestEntityTooLarge, Code: api.CodeTooLarge, Message: "the item would exceed DynamoDB's 400 KB item size limit", Err: err}
	case errors.Is(err, ErrSameCron):
		return api.Invalid(api.FieldError{Field: "end_cron", Message: "must differ from start_cron"})
	case errors.Is(err, cursor.ErrInvalid):
		return &api.Error{Status: http.StatusBadRequest, Code: api.CodeBadRequest, Message: "invalid cursor; pass next_cursor of the previous page unchanged, with the same filters", Err: err}
	}
	return err
}
