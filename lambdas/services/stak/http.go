package stak

import (
	"net/http"
	"strconv"
	"time"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
)

// Config configures NewHandler and NewConsumerFromConfig.
type Config struct {
	Table string
	fn.Common
}

// ConfigFromEnv reads the configuration (not the client) from getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	v, common, err := fn.Tables(contract.Name, getenv, contract.Inbox)
	if err != nil {
		return Config{}, err
	}
	return Config{Table: v[0], Common: common}, nil
}

// NewHandler returns the HTTP API of the contract (routes in
// constructs/stak/contract; docs/schemas/stak.md): tenant settings and
// inbox configs, publishing, an end user's feed, read marks, counters and
// mark-all-read, and the operators' recount. schemas checks inbox schemas
// and message bodies: the function's constructor, stakapi.New, passes
// platform/bodyschema's (stakapi.Schemas).
func NewHandler(cfg Config, schemas BodySchemas) http.Handler {
	log := fn.Logger(contract.Name, cfg.Client, cfg.Logger)
	store := NewStore(cfg.Client, cfg.Table, cfg.CursorKey, schemas)
	cfg.Pin(&store.now, nil)
	h := &handler{store: store}
	keys := api.IdempotencyTable{Client: cfg.Client, Name: cfg.Table, PartitionKey: contract.AttrPK, SortKey: contract.AttrSK, TTL: contract.AttrExpiredAt, Now: cfg.Now}
	r := api.NewRouter(contract.API).Around(keys.Middleware)
	r.Handle(contract.PutTenant, h.putTenant)
	r.Handle(contract.GetTenant, h.getTenant)
	r.Handle(contract.PutInbox, h.putInbox)
	r.Handle(contract.GetInbox, h.getInbox)
	r.Handle(contract.Publish, h.publish)
	r.Handle(contract.Feed, h.feed)
	r.Handle(contract.MarkRead, h.markRead)
	r.Handle(contract.Stats, h.stats)
	r.Handle(contract.PublicStats, h.publicStats)
	r.Handle(contract.ReadAll, h.readAll)
	r.Handle(contract.Recount, h.recount)
	return api.Instrument(log, r.Done())
}

type handler struct {
	store *Store
}

// UserRoutes are the patterns of the contract's end-user (service.JWT)
// routes: in AWS behind the API's JWT authorizer, locally behind the
// runner's verifier; each binds the path to the token (userKeys). The
// others are for publishers and operators, signed with SigV4.
var UserRoutes = func() []string {
	var patterns []string
	for _, r := range contract.API.Routes {
		if r.Auth == service.JWT {
			patterns = append(patterns, r.Pattern())
		}
	}
	return patterns
}()

// Claims of an end user's token (docs/schemas/stak.md, "Who may call
// what"): API Gateway's JWT authorizer has checked signature, issuer,
// audience, exp and nbf before the request reaches the function.
const (
	// ClaimTenant is the custom claim naming the user's tenant.
	ClaimTenant = "tenant"
	// ClaimUser is the standard subject claim: the user's uid.
	ClaimUser = "sub"
)

// userKeys validates the path of an end-user route and binds it to the
// caller's token: the path's tenant must be the tenant claim and its uid
// the subject, or the answer is 403 before anything is read or written.
// No claims at all is a 401: the gateway passes none only when the route
// is not behind the JWT authorizer, which is a deployment fault that must
// not open the route.
func userKeys(r *http.Request) (path, error) {
	p, err := keys(r, contract.ParamTenant, contract.ParamInbox, contract.ParamUID)
	if err != nil {
		return p, err
	}
	c, _ := api.CallerFrom(r.Context())
	if c.Subject == "" {
		return p, &api.Error{Status: http.StatusUnauthorized, Code: api.CodeUnauthorized, Message: "this route takes an end user's token (Authorization: Bearer …)"}
	}
	if c.Claims[ClaimTenant] != p.tenant || c.Subject != p.uid {
		return p, api.Forbidden("the token is for user %q of tenant %q; it may only read and mark that user's messages",
			api.Truncate(c.Subject, 64), api.Truncate(c.Claims[ClaimTenant], 64))
	}
	return p, nil
}

// path holds the validated key parts of a request path.
type path struct {
	tenant, inbox, uid string
}

// keys validates the path values of params. A '#' (sent as %23) would
// change the meaning of a key, so it is a 400, not a 404.
func keys(r *http.Request, params ...service.PathParam) (path, error) {
	var (
		v api.Validator
		p path
	)
	for _, n := range params {
		s := api.PathValue(r, n)
		if msg := checkKey(s); msg != "" {
			v.Add(n.String(), "%s", msg)
		} else if n == contract.ParamUID && s == contract.PublicUID {
			v.Add(n.String(), "%s is reserved", contract.PublicUID)
		}
		switch n {
		case contract.ParamTenant:
			p.tenant = s
		case contract.ParamInbox:
			p.inbox = s
		case contract.ParamUID:
			p.uid = s
		}
	}
	return p, v.Err()
}

type tenantRequest struct {
	Title string `json:"title"`
	TTL   string `json:"ttl"`
}

func (h *handler) putTenant(w http.ResponseWriter, r *http.Request) error {
	p, err := keys(r, contract.ParamTenant)
	if err != nil {
		return err
	}
	var in tenantRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	v.Text("title", in.Title, 1, maxTitleChars)
	checkTTL(&v, "ttl", in.TTL)
	if err := v.Err(); err != nil {
		return err
	}
	ts, err := h.store.PutTenant(r.Context(), TenantSettings{Tenant: p.tenant, Title: in.Title, TTL: in.TTL})
	return api.Reply(w, http.StatusOK, ts, err)
}

func checkTTL(v *api.Validator, field, s string) {
	if s == "" {
		return
	}
	if _, err := ParseTTL(s); err != nil {
		v.Add(field, "must be <n>d, <n>m or <n>s with n > 0 and at most 720d")
	}
}

func (h *handler) getTenant(w http.ResponseWriter, r *http.Request) error {
	p, err := keys(r, contract.ParamTenant)
	if err != nil {
		return err
	}
	ts, err := h.store.Tenant(r.Context(), p.tenant)
	return api.Reply(w, http.StatusOK, ts, err)
}

type inboxRequest struct {
	Title       string            `json:"title"`
	Description string            `json:"description"`
	TTL         map[string]string `json:"ttl"`
	Schema      Schemas           `json:"schema"`
}

func (h *handler) putInbox(w http.ResponseWriter, r *http.Request) error {
	p, err := keys(r, contract.ParamTenant, contract.ParamInbox)
	if err != nil {
		return err
	}
	var in inboxRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	v.Text("title", in.Title, 1, maxTitleChars)
	v.Text("description", in.Description, 0, maxDescriptionChars)
	if len(in.TTL) > maxTTLs {
		v.Add("ttl", "must have at most %d entries", maxTTLs)
	}
	for typ, ttl := range in.TTL {
		if msg := checkKey(typ); msg != "" || typ == "*" {
			v.Add("ttl."+typ, "is not a valid type key: %s", msg)
			continue
		}
		if ttl == "" {
			v.Add("ttl."+typ, "is required")
		}
		checkTTL(&v, "ttl."+typ, ttl)
	}
	checkSchemas(&v, h.store.schemas, in.Schema)
	if err := v.Err(); err != nil {
		return err
	}
	ic, err := h.store.PutInbox(r.Context(), InboxConfig{Tenant: p.tenant, Inbox: p.inbox, Title: in.Title, Description: in.Description, TTL: in.TTL, Schema: in.Schema})
	return api.Reply(w, http.StatusOK, ic, err)
}

func (h *handler) getInbox(w http.ResponseWriter, r *http.Request) error {
	p, err := keys(r, contract.ParamTenant, contract.ParamInbox)
	if err != nil {
		return err
	}
	ic, err := h.store.Inbox(r.Context(), p.tenant, p.inbox)
	return api.Reply(w, http.StatusOK, ic, err)
}

type publishRequest struct {
	HostSystemID *string `json:"host_system_id"`
	Sender       string  `json:"sender"`
	Audiences    *struct {
		Kind  string   `json:"kind"`
		Label string   `json:"label"`
		UIDs  []string `json:"uids"`
	} `json:"audiences"`
	Taxonomy *struct {
		Category string `json:"category"`
	} `json:"taxonomy"`
	Message *struct {
		Title  string  `json:"title"`
		Body   any     `json:"body"`
		CTAURI *string `json:"cta_uri"`
	} `json:"message"`
}

func (h *handler) publish(w http.ResponseWriter, r *http.Request) error {
	received := time.Now()
	p, err := keys(r, contract.ParamTenant, contract.ParamInbox)
	if err != nil {
		return err
	}
	var in publishRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	d, err := in.draft()
	if err != nil {
		return err
	}
	d.Received = received
	m, err := h.store.Publish(r.Context(), p.tenant, p.inbox, d)
	if err == nil {
		// A retry's replay never answers for a message already expired.
		api.Expires(w, time.Unix(m.ExpiredAt, 0))
		log := api.Logger(r.Context())
		metrics.Count(r.Context(), log, contract.Publishes, d.Audiences.Kind)
		if d.Audiences.Kind == AudienceUsers {
			metrics.Emit(r.Context(), log, contract.FanOut, float64(m.Recipients))
		}
	}
	return api.Reply(w, http.StatusCreated, m, err)
}

func (in *publishRequest) draft() (Draft, error) {
	var v api.Validator
	if in.HostSystemID != nil {
		v.Identifier("host_system_id", *in.HostSystemID, MaxKeyLen)
	}
	v.Identifier("sender", in.Sender, MaxKeyLen)
	d := Draft{HostSystemID: in.HostSystemID, Sender: in.Sender}
	if a := in.Audiences; a == nil {
		v.Add("audiences", "is required")
	} else {
		v.OneOf("audiences.kind", a.Kind, AudienceUsers, AudienceEveryone)
		v.Text("audiences.label", a.Label, 0, maxTitleChars)
		d.Audiences = Audiences{Kind: a.Kind, Label: a.Label}
		switch a.Kind {
		case AudienceUsers:
			if len(a.UIDs) == 0 || len(a.UIDs) > MaxRecipients {
				v.Add("audiences.uids", "must list 1 to %d users", MaxRecipients)
			}
			seen := map[string]bool{}
			for i, uid := range a.UIDs {
				field := "audiences.uids[" + strconv.Itoa(i) + "]"
				switch msg := checkKey(uid); {
				case msg != "":
					v.Add(field, "%s", msg)
				case uid == contract.PublicUID:
					v.Add(field, "%s is reserved; use kind everyone", contract.PublicUID)
				case seen[uid]:
					v.Add(field, "duplicates %q", uid)
				}
				seen[uid] = true
			}
			d.Audiences.UIDs = a.UIDs
		case AudienceEveryone:
			if len(a.UIDs) > 0 {
				v.Add("audiences.uids", "must be empty for kind everyone")
			}
		}
	}
	if t := in.Taxonomy; t != nil && t.Category != "" {
		if msg := checkKey(t.Category); msg != "" {
			v.Add("taxonomy.category", "%s", msg)
		} else if t.Category == "*" {
			v.Add("taxonomy.category", "must not be *")
		}
		d.Category = t.Category
	}
	if m := in.Message; m == nil {
		v.Add("message", "is required")
	} else {
		v.Text("message.title", m.Title, 1, maxTitleChars)
		if m.CTAURI != nil {
			v.Identifier("message.cta_uri", *m.CTAURI, maxURIChars)
		}
		d.Title, d.Body, d.CTAURI = m.Title, m.Body, m.CTAURI
		if b, err := api.Marshal(m.Body); err == nil && len(b)-1 > MaxBodyBytes {
			return d, api.TooLarge("message.body is %d bytes of JSON; the limit is %d", len(b)-1, MaxBodyBytes)
		}
	}
	return d, v.Err()
}

func (h *handler) feed(w http.ResponseWriter, r *http.Request) error {
	p, err := userKeys(r)
	if err != nil {
		return err
	}
	var v api.Validator
	q := api.QueryOf(r)
	limit := api.PageLimit(&v, q, DefaultPageSize, MaxPageSize)
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.Feed(r.Context(), p.tenant, p.inbox, p.uid, q.Cursor(), limit)
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}

// ReadResult is the answer of mark-read.
type ReadResult struct {
	Message
	// Changed is false when the message was already read.
	Changed bool `json:"changed"`
}

func (h *handler) markRead(w http.ResponseWriter, r *http.Request) error {
	p, err := userKeys(r)
	if err != nil {
		return err
	}
	id := api.PathValue(r, contract.ParamID)
	if !validMessageID(id) {
		return api.NotFound("message %q not found", api.Truncate(id, 64))
	}
	m, changed, err := h.store.MarkRead(r.Context(), p.tenant, p.inbox, p.uid, id)
	if err != nil {
		return err
	}
	if changed {
		metrics.Count(r.Context(), api.Logger(r.Context()), contract.Reads, contract.HowOne)
	}
	api.WriteJSON(w, http.StatusOK, ReadResult{Message: *m, Changed: changed})
	return nil
}

func (h *handler) stats(w http.ResponseWriter, r *http.Request) error {
	p, err := userKeys(r)
	if err != nil {
		return err
	}
	st, err := h.store.Stats(r.Context(), p.tenant, p.inbox, p.uid)
	return api.Reply(w, http.StatusOK, st, err)
}

func (h *handler) publicStats(w http.ResponseWriter, r *http.Request) error {
	p, err := keys(r, contract.ParamTenant, contract.ParamInbox)
	if err != nil {
		return err
	}
	st, err := h.store.PublicStats(r.Context(), p.tenant, p.inbox)
	return api.Reply(w, http.StatusOK, st, err)
}

type readAllRequest struct {
	UpTo     string `json:"up_to"`
	UpToTime int64  `json:"up_to_time"`
	Limit    *int   `json:"limit"`
	Cursor   string `json:"cursor"`
}

func (h *handler) readAll(w http.ResponseWriter, r *http.Request) error {
	p, err := userKeys(r)
	if err != nil {
		return err
	}
	var in readAllRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	if in.UpTo != "" && !validMessageID(in.UpTo) {
		v.Add("up_to", "must be a message id (%d base36 characters)", messageIDLen)
	}
	// Bounded: (up_to_time+1)*1000 past ~9.2e15 overflowed into a bound
	// that marked nothing.
	v.EpochSeconds("up_to_time", in.UpToTime)
	if in.UpTo != "" && in.UpToTime != 0 {
		v.Add("up_to_time", "give up_to or up_to_time, not both")
	}
	if in.Cursor != "" && (in.UpTo != "" || in.UpToTime != 0) {
		v.Add("cursor", "carries the bound of the first call; send it without up_to and up_to_time")
	}
	limit := MaxReadAll
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxReadAll {
			v.Add("limit", "must be an integer from 1 to %d", MaxReadAll)
		}
		limit = *in.Limit
	}
	if err := v.Err(); err != nil {
		return err
	}
	res, err := h.store.MarkAllRead(r.Context(), p.tenant, p.inbox, p.uid, Bound{UpTo: in.UpTo, UpToTime: in.UpToTime}, in.Cursor, limit)
	if err == nil && res.Marked > 0 {
		metrics.Emit(r.Context(), api.Logger(r.Context()), contract.Reads, float64(res.Marked), contract.HowAll)
	}
	return api.Reply(w, http.StatusOK, res, api.CursorHint(err, cursorHint))
}

type recountRequest struct {
	UID string `json:"uid"`
}

func (h *handler) recount(w http.ResponseWriter, r *http.Request) error {
	p, err := keys(r, contract.ParamTenant, contract.ParamInbox)
	if err != nil {
		return err
	}
	var in recountRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	if in.UID != "" {
		var v api.Validator
		if msg := checkKey(in.UID); msg != "" {
			v.Add("uid", "%s", msg)
		} else if in.UID == contract.PublicUID {
			v.Add("uid", "%s is reserved; the public counters are always recounted", contract.PublicUID)
		}
		if err := v.Err(); err != nil {
			return err
		}
	}
	res, err := h.store.Recount(r.Context(), p.tenant, p.inbox, in.UID)
	if err == nil {
		metrics.Emit(r.Context(), api.Logger(r.Context()), contract.CounterRepairs, float64(len(res.Changes)))
	}
	return api.Reply(w, http.StatusOK, res, err)
}
