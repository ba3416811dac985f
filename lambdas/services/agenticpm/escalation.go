package agenticpm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Escalation is a decision the agent hands to the user (PK PROJECT#<id>,
// SK ESCALATION#<id>).
type Escalation struct {
	ID                  string           `dynamodbav:"id" json:"id"`
	ProjectID           string           `dynamodbav:"projectId" json:"projectId"`
	Title               string           `dynamodbav:"title" json:"title"`
	Context             Doc              `dynamodbav:"context" json:"context"`
	Options             Doc              `dynamodbav:"options" json:"options"`
	AgentRecommendation string           `dynamodbav:"agentRecommendation,omitempty" json:"agentRecommendation,omitempty"`
	AgentRationale      string           `dynamodbav:"agentRationale,omitempty" json:"agentRationale,omitempty"`
	Status              EscalationStatus `dynamodbav:"status" json:"status"`
	UserDecision        string           `dynamodbav:"userDecision,omitempty" json:"userDecision,omitempty"`
	UserNotes           string           `dynamodbav:"userNotes,omitempty" json:"userNotes,omitempty"`
	DecidedAt           string           `dynamodbav:"decidedAt,omitempty" json:"decidedAt,omitempty"`
	CreatedAt           string           `dynamodbav:"createdAt" json:"createdAt"`
	// The lifecycle's attributes (not in the document, decision 20): the
	// deadline after which the release job expires a pending escalation,
	// when it did, and the escalations one replaced or was replaced by.
	ExpiresAt    string `dynamodbav:"expiresAt,omitempty" json:"expiresAt,omitempty"`
	ExpiredAt    string `dynamodbav:"expiredAt,omitempty" json:"expiredAt,omitempty"`
	Supersedes   string `dynamodbav:"supersedes,omitempty" json:"supersedes,omitempty"`
	SupersededBy string `dynamodbav:"supersededBy,omitempty" json:"supersededBy,omitempty"`
	SupersededAt string `dynamodbav:"supersededAt,omitempty" json:"supersededAt,omitempty"`
}

type escalationItem struct {
	keys
	Escalation
}

// Feed events of the escalation lifecycle, written in the transaction of
// the change they report (decision 20).
const (
	EventTypeEscalationCreated = "escalation_created"
	EventTypeEscalationDecided = "escalation_decided"
	EventTypeEscalationExpired = "escalation_expired"
)

// Escalation deadlines: without an expiresAt of its own an escalation
// expires EscalationExpiryKey hours (the agent setting, else its
// documented default) after it was created.
const (
	EscalationExpiryKey = "escalation_expiry_hours"
	// MaxEscalationExpiry bounds a deadline, given or configured.
	MaxEscalationExpiry = 365 * 24 * time.Hour
	// MinEscalationExpiry is how far ahead a given expiresAt must be at
	// least: an escalation asks a person, and one due a second after it
	// was made expires before anyone can see it (issue 29).
	MinEscalationExpiry = 5 * time.Minute
)

// NewEscalation is the input of CreateEscalation. ExpiresAt is a Timestamp
// or "" (the configured deadline).
type NewEscalation struct {
	Title                               string
	Context, Options                    Doc
	AgentRecommendation, AgentRationale string
	ExpiresAt                           string
}

// escalationKeys are the keys of an escalation in status.
func escalationKeys(e Escalation) keys {
	return keys{PK: contract.ProjectPK(e.ProjectID), SK: contract.PrefixEscalation + e.ID, GSI1PK: contract.EscalationGSI1PK(string(e.Status)), GSI1SK: e.CreatedAt + "#" + e.ID}
}

// newEscalation builds a pending escalation created at t, with its
// deadline (ExpiresAt, else the configured one).
func (s *Store) newEscalation(ctx context.Context, projectID string, in NewEscalation, t time.Time) (Escalation, error) {
	e := Escalation{ID: s.newID(), ProjectID: projectID, Title: in.Title, Context: in.Context, Options: in.Options,
		AgentRecommendation: in.AgentRecommendation, AgentRationale: in.AgentRationale,
		Status: EscalationPending, CreatedAt: Timestamp(t), ExpiresAt: in.ExpiresAt}
	if e.ExpiresAt == "" {
		hours, err := s.settingNumber(ctx, EscalationExpiryKey, 1, MaxEscalationExpiry.Hours())
		if err != nil {
			return e, err
		}
		e.ExpiresAt = Timestamp(t.Add(time.Duration(hours * float64(time.Hour))))
	}
	return e, nil
}

// escalationEvent is the feed event of an escalation's change.
func escalationEvent(e Escalation, eventType string, sev Severity, summary string, extra map[string]any) NewEvent {
	detail := map[string]any{"escalationId": e.ID, "status": string(e.Status)}
	for k, v := range extra {
		detail[k] = v
	}
	return NewEvent{ProjectID: e.ProjectID, EventType: eventType, Severity: sev,
		Summary: summary + ": " + api.Truncate(e.Title, 200), Detail: Doc(mustJSON(detail))}
}

// CreateEscalation stores a pending escalation under an existing project,
// with its escalation_created event in the project's feed and GLOBAL, in
// one transaction behind the project check (decisions 12 and 20).
func (s *Store) CreateEscalation(ctx context.Context, projectID string, in NewEscalation) (*Escalation, error) {
	t := s.now()
	e, err := s.newEscalation(ctx, projectID, in, t)
	if err != nil {
		return nil, err
	}
	put, err := s.putNew(escalationItem{keys: escalationKeys(e), Escalation: e}, nil)
	if err != nil {
		return nil, err
	}
	_, events, err := s.eventWrites(escalationEvent(e, EventTypeEscalationCreated, SeverityWarning, "Escalation raised",
		map[string]any{"expiresAt": e.ExpiresAt}), t)
	if err != nil {
		return nil, err
	}
	if err := s.transactInProject(ctx, projectID, append(ddb.Tx{put}, events...)); err != nil {
		return nil, err
	}
	return &e, nil
}

// GetEscalation returns one escalation of a project.
func (s *Store) GetEscalation(ctx context.Context, projectID, id string) (*Escalation, error) {
	var it escalationItem
	found, err := s.get(ctx, contract.ProjectPK(projectID), contract.PrefixEscalation+id, &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, s.missingUnder(ctx, projectID, "escalation", id)
	}
	return &it.Escalation, nil
}

// Decision is the user's answer to an escalation.
type Decision struct {
	UserDecision string
	UserNotes    string
}

// errNotPending: a status change's condition refused the escalation;
// escalationState explains why from the item the condition saw.
var errNotPending = errors.New("agenticpm: escalation not pending")

// pendingCond is the condition of every change away from pending: the
// escalation exists, is pending and, unless overdue is set (the expiry),
// its deadline has not passed (an overdue escalation is as good as
// expired, even before the job has run).
// Its names (#pk, #status, #expiresAt) and values (:pending, :now) are
// added to e.
func pendingCond(e ddb.Expr, now string, overdue bool) string {
	e.Names["#pk"], e.Names["#status"], e.Names["#expiresAt"] = contract.AttrPK, contract.AttrStatus, contract.AttrExpiresAt
	e.Values[":pending"], e.Values[":now"] = ddb.S(EscalationPending), ddb.S(now)
	if overdue {
		return "attribute_exists(#pk) AND #status = :pending AND #expiresAt <= :now"
	}
	return "attribute_exists(#pk) AND #status = :pending AND (attribute_not_exists(#expiresAt) OR #expiresAt > :now)"
}

// escalationState is the error of a change refused by pendingCond, from
// the escalation the condition saw (nil: missing).
func (s *Store) escalationState(ctx context.Context, projectID, id string, old *Escalation, now string) error {
	switch {
	case old == nil:
		return s.missingUnder(ctx, projectID, "escalation", id)
	case old.Status != EscalationPending:
		return &StatusConflictError{Entity: "escalation", ID: id, Want: string(EscalationPending), Current: string(old.Status)}
	case old.ExpiresAt != "" && old.ExpiresAt <= now:
		return &StatusConflictError{Entity: "escalation", ID: id, Want: string(EscalationPending),
			Current: "past its deadline " + old.ExpiresAt + " (expiring)"}
	}
	return fmt.Errorf("agenticpm: escalation %s: condition failed", id)
}

// changeEscalation moves escalation e from pending to e.Status in one
// transaction: the Update (status and its GSI1 entry together, decision
// 6, plus set), conditioned by pendingCond, and ops (its feed event, a
// replacement). DynamoDB's client request token makes the transaction
// idempotent, so an SDK retry after a lost answer succeeds instead of
// finding its own change.
func (s *Store) changeEscalation(ctx context.Context, e Escalation, now string, overdue bool, set map[string]string, ops ddb.Tx) error {
	upd := ddb.Expr{
		Update: "SET #status = :status, #gsi1pk = :gsi1pk",
		Names:  map[string]string{"#status": contract.AttrStatus, "#gsi1pk": contract.AttrGSI1PK},
		Values: map[string]types.AttributeValue{":status": ddb.S(e.Status), ":gsi1pk": ddb.S(contract.EscalationGSI1PK(string(e.Status)))},
	}
	upd.Condition = pendingCond(upd, now, overdue)
	// set's attributes, by position: their names are the callers' own
	// (decidedAt, supersededBy, …), top-level, none of them above.
	i := 0
	for k, v := range set {
		n := strconv.Itoa(i)
		upd.Update += ", #set" + n + " = :set" + n
		upd.Names["#set"+n], upd.Values[":set"+n] = k, ddb.S(v)
		i++
	}
	u := upd.TxUpdate(s.table, key(contract.ProjectPK(e.ProjectID), contract.PrefixEscalation+e.ID))
	u.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	var tx ddb.Tx
	tx.Update(u, errNotPending)
	return storeError("TransactWriteItems", append(tx, ops...).Run(ctx, s.client))
}

// refused turns a failed change into the client's error.
func (s *Store) refused(ctx context.Context, projectID, id, now string, err error) error {
	if !errors.Is(err, errNotPending) {
		return err
	}
	return ddb.IfConditionFailed(err, func(old *Escalation) error { return s.escalationState(ctx, projectID, id, old, now) })
}

// pending reads an escalation that a change requires pending, refusing a
// missing, decided or overdue one before any write.
func (s *Store) pending(ctx context.Context, projectID, id, now string) (*Escalation, error) {
	e, err := s.GetEscalation(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	if e.Status != EscalationPending || e.ExpiresAt != "" && e.ExpiresAt <= now {
		return nil, s.escalationState(ctx, projectID, id, e, now)
	}
	return e, nil
}

// Decide records the decision on a pending escalation and returns it.
//
// A consistent read finds the escalation (404, 409 before any write), then
// one transaction moves it to decided with its escalation_decided event,
// conditioned on it still being pending and within its deadline: of
// concurrent decisions (and supersedes, and expiry runs) exactly one wins,
// the others get a StatusConflictError.
func (s *Store) Decide(ctx context.Context, projectID, id string, d Decision) (*Escalation, error) {
	t := s.now()
	now := Timestamp(t)
	e, err := s.pending(ctx, projectID, id, now)
	if err != nil {
		return nil, err
	}
	e.Status, e.UserDecision, e.UserNotes, e.DecidedAt = EscalationDecided, d.UserDecision, d.UserNotes, now
	set := map[string]string{contract.AttrUserDecision: d.UserDecision, contract.AttrDecidedAt: now}
	if d.UserNotes != "" {
		set[contract.AttrUserNotes] = d.UserNotes
	}
	_, events, err := s.eventWrites(escalationEvent(*e, EventTypeEscalationDecided, SeverityInfo, "Escalation decided",
		map[string]any{"userDecision": api.Truncate(d.UserDecision, 200)}), t)
	if err != nil {
		return nil, err
	}
	if err := s.changeEscalation(ctx, *e, now, false, set, events); err != nil {
		return nil, s.refused(ctx, projectID, id, now, err)
	}
	return e, nil
}

// Supersede replaces a pending escalation with a new one that names it
// (supersedes), in one transaction: the old one moves to superseded
// (supersededBy, its GSI1 entry with it), conditioned as a decision is,
// and the new one is put pending with its escalation_created event. Of
// concurrent supersedes (and decisions, and expiry runs) one wins; the
// others are a StatusConflictError and create nothing. It returns the new
// escalation.
func (s *Store) Supersede(ctx context.Context, projectID, id string, in NewEscalation) (*Escalation, error) {
	t := s.now()
	now := Timestamp(t)
	old, err := s.pending(ctx, projectID, id, now)
	if err != nil {
		return nil, err
	}
	e, err := s.newEscalation(ctx, projectID, in, t)
	if err != nil {
		return nil, err
	}
	e.Supersedes = id
	put, err := s.putNew(escalationItem{keys: escalationKeys(e), Escalation: e}, nil)
	if err != nil {
		return nil, err
	}
	_, events, err := s.eventWrites(escalationEvent(e, EventTypeEscalationCreated, SeverityWarning, "Escalation raised, superseding "+id,
		map[string]any{"expiresAt": e.ExpiresAt, "supersedes": id}), t)
	if err != nil {
		return nil, err
	}
	old.Status = EscalationSuperseded
	set := map[string]string{contract.AttrSupersededBy: e.ID, contract.AttrSupersededAt: now}
	if err := s.changeEscalation(ctx, *old, now, false, set, append(ddb.Tx{put}, events...)); err != nil {
		return nil, s.refused(ctx, projectID, id, now, err)
	}
	return &e, nil
}

// expire moves an overdue pending escalation to expired with its
// escalation_expired event; a StatusConflictError when someone decided,
// superseded or expired it first.
func (s *Store) expire(ctx context.Context, e Escalation, t time.Time) error {
	now := Timestamp(t)
	e.Status, e.ExpiredAt = EscalationExpired, now
	_, events, err := s.eventWrites(escalationEvent(e, EventTypeEscalationExpired, SeverityWarning, "Escalation expired undecided",
		map[string]any{"expiresAt": e.ExpiresAt}), t)
	if err != nil {
		return err
	}
	err = s.changeEscalation(ctx, e, now, true, map[string]string{contract.AttrExpiredAt: now}, events)
	if errors.Is(err, errNotPending) {
		return &StatusConflictError{Entity: "escalation", ID: e.ID, Want: "pending and overdue", Current: "changed meanwhile"}
	}
	return err
}

// ExpiryReport is what one expiry pass did.
type ExpiryReport struct {
	// Overdue counts the pending escalations found past their deadline;
	// Expired those this pass expired (the rest were decided, superseded
	// or expired by someone else in between).
	Overdue, Expired int
}

// ExpireOverdue expires every pending escalation whose deadline has
// passed (up to MaxReleasePerRun per call). The pending view (GSI1
// ESCALATION#pending) is read with a filter on expiresAt: pending
// escalations are few, and their index key orders them by creation, not
// deadline. Overlapping runs are safe: each expiry is a transaction
// conditioned on pending and overdue, so one wins per escalation.
func (s *Store) ExpireOverdue(ctx context.Context) (*ExpiryReport, error) {
	t := s.now()
	now := Timestamp(t)
	rep := &ExpiryReport{}
	in := ddb.Expr{
		KeyCondition: "#gsi1pk = :pending", Filter: "#expiresAt <= :now",
		Names:  map[string]string{"#gsi1pk": contract.AttrGSI1PK, "#expiresAt": contract.AttrExpiresAt},
		Values: map[string]types.AttributeValue{":pending": ddb.S(contract.EscalationGSI1PK(string(EscalationPending))), ":now": ddb.S(now)},
	}.Query(s.table)
	in.IndexName = aws.String(contract.IndexGSI1)
	var due []Escalation
	for item, err := range ddb.All(ctx, s.client, in) {
		if err != nil {
			return rep, storeError("Query", err)
		}
		var e escalationItem
		if err := attributevalue.UnmarshalMap(item, &e); err != nil {
			return rep, fmt.Errorf("agenticpm: unmarshal escalation: %w", err)
		}
		if due = append(due, e.Escalation); len(due) == MaxReleasePerRun {
			break
		}
	}
	rep.Overdue = len(due)
	var errs []error
	for _, e := range due {
		switch err := s.expire(ctx, e, t); {
		case err == nil:
			rep.Expired++
		case errors.Is(err, ErrStatusConflict), errors.Is(err, ErrBusy):
			// Decided, superseded or expired meanwhile, or the index was
			// behind: nothing to do.
		default:
			errs = append(errs, fmt.Errorf("expire %s: %w", e.ID, err))
		}
	}
	return rep, errors.Join(errs...)
}

// settingNumber reads a numeric agent setting: the stored override, else
// its documented default. A stored value that is not a number within
// [lo, hi] (PUT refuses those now; an older item may hold one) falls back
// to the default, logged.
func (s *Store) settingNumber(ctx context.Context, k string, lo, hi float64) (float64, error) {
	c, err := s.GetAgentConfig(ctx, k)
	if err != nil {
		return 0, err
	}
	if n, ok := numberIn(c.Value, lo, hi); ok {
		return n, nil
	}
	s.log.WarnContext(ctx, "agent setting out of range; using the default", "key", k, "min", lo, "max", hi)
	n, _ := numberIn(DefaultAgentConfig[k], lo, hi)
	return n, nil
}

// numberIn reports whether d is a JSON number within [lo, hi].
func numberIn(d Doc, lo, hi float64) (float64, bool) {
	if d.Kind() != "number" {
		return 0, false
	}
	n, err := strconv.ParseFloat(string(d), 64)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

// ListProjectEscalations returns a project's escalations in key (id) order.
func (s *Store) ListProjectEscalations(ctx context.Context, projectID, after string, limit int) (*Page[Escalation], error) {
	return listUnder[Escalation](ctx, s, projectID, listing{view: "project-escalations", pk: contract.ProjectPK(projectID), prefix: contract.PrefixEscalation}, after, limit)
}

// ListEscalations returns the escalations in status across projects,
// newest first. It reads GSI1, which is eventually consistent: an
// escalation decided a moment ago can still be listed as pending.
func (s *Store) ListEscalations(ctx context.Context, status EscalationStatus, after string, limit int) (*Page[Escalation], error) {
	return listPage[Escalation](ctx, s, listing{view: "escalations-by-status", index: true, pk: contract.EscalationGSI1PK(string(status)), newestFirst: true}, after, limit)
}
