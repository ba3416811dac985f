package nucleus

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// HeaderUserID names the user of a write when API Gateway has no IAM
// caller for the request (local runs, tests, a trusted front end).
const HeaderUserID = "X-User-Id"

// Config configures NewHandler.
type Config struct {
	Tables Tables
	fn.Common
	// Cloud runs connection tests (POST /accounts/{id}/test); without it
	// that route answers 503. New sets it from the environment.
	Cloud *Cloud
	// RolePattern is contract.EnvRolePattern's value; "" accepts any role.
	RolePattern string
	// NewEntryID defaults to ULIDs; tests pin it.
	NewEntryID func(time.Time) string
}

// ConfigFromEnv reads the configuration (not the client) from getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	v, common, err := fn.Tables(contract.Name, getenv, contract.App, contract.Audit)
	if err != nil {
		return Config{}, err
	}
	return Config{Tables: Tables{App: v[0], Audit: v[1]}, Common: common, RolePattern: getenv(contract.EnvRolePattern)}, nil
}

// New builds the service from the environment: the constructor of its
// function (APIFunction).
func New(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (http.Handler, error) {
	withCloud := func(getenv func(string) string) (Config, error) {
		cfg, err := ConfigFromEnv(getenv)
		if err == nil {
			cfg.Cloud, err = NewCloud(ctx, getenv)
		}
		return cfg, err
	}
	return fn.New(ctx, getenv, withCloud, (*Config).SetClient, NewHandler, opts...)
}

// NewHandler returns the HTTP API (docs/schemas/nucleus.md, "HTTP API").
// infra/stacks deploys the same routes (test/e2e compares the two); Go's
// greedy {arn...} is API Gateway's {arn+}.
func NewHandler(cfg Config) http.Handler {
	log := fn.Logger(contract.Name, cfg.Client, cfg.Logger)
	store := NewStore(cfg.Client, cfg.Tables, cfg.CursorKey)
	cfg.Pin(&store.now, &store.newID)
	if cfg.NewEntryID != nil {
		store.newEntryID = cfg.NewEntryID
	}
	h := &handler{store: store, cloud: cfg.Cloud, rolePattern: cfg.RolePattern, assumable: iamPattern(cfg.RolePattern)}
	keys := api.IdempotencyTable{Client: cfg.Client, Name: cfg.Tables.App, PartitionKey: contract.AttrPK, SortKey: contract.AttrSK, TTL: contract.AttrExpireAt, Now: cfg.Now}
	r := api.NewRouter(contract.API).Around(keys.Middleware)
	r.Handle(contract.CreateAccount, h.createAccount)
	r.Handle(contract.ListAccounts, h.listAccounts)
	r.Handle(contract.GetAccount, h.getAccount)
	r.Handle(contract.UpdateAccount, h.updateAccount)
	r.Handle(contract.DeleteAccount, h.deleteAccount)
	r.Handle(contract.AccountResources, h.accountResources)
	r.Handle(contract.TestAccount, h.testAccount)
	r.Handle(contract.CreateSchedule, h.createSchedule)
	r.Handle(contract.ListSchedules, h.listSchedules)
	r.Handle(contract.GetSchedule, h.getSchedule)
	r.Handle(contract.UpdateSchedule, h.updateSchedule)
	r.Handle(contract.DeleteSchedule, h.deleteSchedule)
	r.Handle(contract.AttachResource, h.attachResource)
	r.Handle(contract.DetachResource, h.detachResource)
	r.Handle(contract.RecordExecution, h.recordExecution)
	r.Handle(contract.Timeline, h.timeline)
	r.Handle(contract.GlobalLog, h.globalLog)
	r.Handle(contract.EntityLog, h.entityLog)
	return api.Instrument(log, r.Done())
}

type handler struct {
	store       *Store
	cloud       *Cloud
	rolePattern string
	assumable   *regexp.Regexp // nil: any role
}

// checkRole checks role_arn, and that IAM lets Nucleus assume it.
func (h *handler) checkRole(v *api.Validator, field, arn, accountID string) {
	checkRoleARN(v, field, arn, accountID)
	if h.assumable == nil || !roleARNPattern().MatchString(arn) {
		return
	}
	_, rest, _ := strings.Cut(arn, ":role/")
	if !h.assumable.MatchString(rest) {
		v.Add(field, "must name a role matching %s: the only roles Nucleus may assume (create the role under such a name)", h.rolePattern)
	}
}

// iamPattern compiles an IAM ARN pattern: * matches any run of
// characters (slashes too), ? one character.
func iamPattern(p string) *regexp.Regexp {
	if p == "" {
		return nil
	}
	q := regexp.QuoteMeta(p)
	q = strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(q)
	return regexp.MustCompile("^" + q + "$")
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

// target returns the id the path names and the user acting on it, for
// routes with no body.
func target(r *http.Request, pathID func(*http.Request) (string, error)) (id, u string, err error) {
	if id, err = pathID(r); err != nil {
		return "", "", err
	}
	var v api.Validator
	u = user(&v, r)
	return id, u, v.Err()
}

// remove serves a DELETE of the entity the path names: 204 once del
// (user, id) succeeds.
func (h *handler) remove(w http.ResponseWriter, r *http.Request, pathID func(*http.Request) (string, error),
	del func(ctx context.Context, user, id string) error) error {
	id, u, err := target(r, pathID)
	if err != nil {
		return err
	}
	if err := del(r.Context(), u, id); err != nil {
		return api.About(err, id)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pathAccountID returns the path's account id. Anything but 12 digits
// cannot name an account: 404 without a DynamoDB call.
func pathAccountID(r *http.Request) (string, error) {
	id := api.PathValue(r, contract.ParamID)
	if !ValidAccountID(id) {
		return "", api.NotFound("account %q not found", api.Truncate(id, 64))
	}
	return id, nil
}

// pageUnder answers one page of what lies under the item the path names
// (an account's resources, a schedule with its targets): the shape of
// both routes.
func pageUnder[T any](w http.ResponseWriter, r *http.Request, pathID func(*http.Request) (string, error),
	page func(ctx context.Context, id, cursor string, limit int) (T, error)) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var v api.Validator
	q := api.QueryOf(r)
	n := api.PageLimit(&v, q, 0, MaxPageSize)
	if err := v.Err(); err != nil {
		return err
	}
	out, err := page(r.Context(), id, q.Cursor(), n)
	return api.Reply(w, http.StatusOK, out, api.CursorHint(api.About(err, id), cursorHint))
}

// pathScheduleID returns the path's schedule id, a canonical UUID.
func pathScheduleID(r *http.Request) (string, error) {
	return api.PathUUID(r, contract.ParamID, "schedule")
}
