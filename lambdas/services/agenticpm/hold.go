package agenticpm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
)

// The hold queue (docs/schemas/agenticpm.md, "Hold queue"): a held action
// carries the sparse GSI1 entry HOLD#pending / <heldUntil>#<id> until it is
// released or cancelled. Releasing moves it to HOLD#dispatch /
// <executedAt>#<id>, the outbox of actions whose event is not on the bus
// yet, and a confirmed PutEvents removes that entry.
const (
	// DispatchLease is how long the releaser of an action alone may hand
	// it to EventBridge. A releaser that dies, or whose PutEvents fails,
	// leaves the action in the outbox; the next run after the lease sends
	// it. Longer than a PutEvents call with retries, shorter than a few
	// runs of the one-minute schedule.
	DispatchLease = 2 * time.Minute
	// MaxReleasePerRun bounds the due actions one run releases and the
	// outbox entries it sends, so a run ends well within its timeout; the
	// rest waits a minute for the next run.
	MaxReleasePerRun = 500
	// releaseWorkers is how many release transactions a run has in flight.
	releaseWorkers = 4
	// maxPutEventsEntries is PutEvents' limit of entries per call.
	maxPutEventsEntries = 10
	// maxPutEventsBytes is PutEvents' limit on the entries of one call
	// (Source, DetailType, Detail and Resources, in UTF-8 bytes). An action
	// can hold more than that (its detail and confidence documents), so an
	// event that would not fit goes without them (EventDetail.Trimmed).
	maxPutEventsBytes = 256 << 10
)

// The events the release hands to integrations.
const (
	EventSource     = "dynastack.agenticpm"
	EventDetailType = "AgentActionReleased"
	// EventTypeActionTaken is the feed event a release writes.
	EventTypeActionTaken = "action_taken"
)

// Who released an action.
const (
	ReleasedBySchedule = "schedule"
	ReleasedByAPI      = "api"
)

// ErrNotDue: the action is held beyond now; the release job leaves it.
var ErrNotDue = errors.New("agenticpm: action not due")

// EventDetail is the detail of an AgentActionReleased event. Integrations
// must act once per IdempotencyKey: the outbox sends again when it cannot
// tell whether an earlier PutEvents got through.
type EventDetail struct {
	IdempotencyKey string `json:"idempotencyKey"`
	Action         Action `json:"action"`
	// Trimmed: the action's detail and confidence were left out to fit
	// EventBridge's 256 KB; read the action (GET /projects/{id}/actions).
	Trimmed bool `json:"trimmed,omitempty"`
}

// eventEntry is the PutEvents entry of a released action and its size as
// EventBridge counts it.
func (s *Store) eventEntry(a Action) (EventEntry, int, error) {
	d := EventDetail{IdempotencyKey: idempotencyKey(a), Action: a}
	detail, err := json.Marshal(d)
	if err == nil && len(EventSource)+len(EventDetailType)+len(detail) > maxPutEventsBytes {
		d.Action.Detail, d.Action.Confidence, d.Trimmed = nil, nil, true
		detail, err = json.Marshal(d)
	}
	if err != nil {
		return EventEntry{}, 0, fmt.Errorf("agenticpm: marshal event detail: %w", err)
	}
	return EventEntry{
		EventBusName: s.bus, Source: EventSource, DetailType: EventDetailType, Detail: string(detail),
	}, len(EventSource) + len(EventDetailType) + len(detail), nil
}

// idempotencyKey is one per action: an action is released at most once.
func idempotencyKey(a Action) string { return "agenticpm/action/" + a.ID }

// heldKeys are the GSI1 keys of a held action.
func heldKeys(heldUntil, id string) (string, string) {
	return contract.KeyHoldPending, heldUntil + "#" + id
}

// actionByID reads a project's action by id. The id is a ULID of the
// millisecond the sort key's timestamp (microseconds) was taken in, so one
// Query over that millisecond finds it.
func (s *Store) actionByID(ctx context.Context, projectID, id string) (map[string]types.AttributeValue, error) {
	at, ok := ids.ULIDTime(id)
	if !ok {
		return nil, &NotFoundError{Entity: "action", ID: id}
	}
	from := contract.PrefixAction + Timestamp(at)
	to := contract.PrefixAction + Timestamp(at.Add(time.Millisecond-time.Microsecond)) + "#~"
	in := ddb.Expr{
		KeyCondition: "#pk = :pk AND #sk BETWEEN :from AND :to", Filter: "#id = :id",
		Names:  map[string]string{"#pk": contract.AttrPK, "#sk": contract.AttrSK, "#id": contract.AttrID},
		Values: map[string]types.AttributeValue{":pk": ddb.S(contract.ProjectPK(projectID)), ":from": ddb.S(from), ":to": ddb.S(to), ":id": ddb.S(id)},
	}.Query(s.table)
	in.ConsistentRead = aws.Bool(true)
	out, err := s.client.Query(ctx, in)
	if err != nil {
		return nil, storeError("Query", err)
	}
	for _, item := range out.Items {
		if live(item, s.now()) {
			return item, nil
		}
	}
	return nil, &NotFoundError{Entity: "action", ID: id}
}

// heldState explains why a held action cannot be released or cancelled,
// from the item a failed condition was evaluated against.
func heldState(old map[string]types.AttributeValue, id string, now time.Time, due bool) error {
	var a actionItem
	if len(old) == 0 || !live(old, now) || attributevalue.UnmarshalMap(old, &a) != nil {
		return &NotFoundError{Entity: "action", ID: id}
	}
	cur := "held"
	switch {
	case a.Executed:
		cur = "released"
	case a.CancelledAt != "":
		cur = "cancelled"
	case a.HeldUntil == "":
		cur = "not held"
	case due && a.HeldUntil > Timestamp(now):
		return fmt.Errorf("%w: %s is held until %s", ErrNotDue, id, a.HeldUntil)
	}
	return &StatusConflictError{Entity: "action", ID: id, Want: "held", Current: cur}
}

// Released is the result of a release: the action as stored, and whether
// its event is on the bus yet (false: the outbox sends it).
type Released struct {
	Action
	Dispatched bool `json:"dispatched"`
}

// ReleaseAction releases a held action now, due or not: the API's
// "release now". A released or cancelled action is a StatusConflictError.
func (s *Store) ReleaseAction(ctx context.Context, projectID, id string) (*Released, error) {
	a, err := s.actionItemByID(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	d, err := s.release(ctx, a, ReleasedByAPI, false)
	if err != nil {
		return nil, err
	}
	sent, err := s.dispatch(ctx, []outboxEntry{*d})
	if err != nil {
		// Released all the same; the outbox sends it after the lease.
		s.log.WarnContext(ctx, "release: event not sent; the outbox will send it", "action", id, "error", err.Error())
	}
	return &Released{Action: d.a.Action, Dispatched: sent == 1}, nil
}

// outboxEntry is a released action whose event the holder of lease sends.
type outboxEntry struct {
	a     actionItem
	lease int64 // epoch milliseconds the lease ends; identifies the holder
}

// errNotHeld: the release's condition refused the action, which heldState
// explains from the item the condition saw.
var errNotHeld = errors.New("agenticpm: action not held")

// release is the gate: one transaction that marks the action executed
// (conditioned on not executed, not cancelled, still in the hold queue,
// and, for the job, due), moves its GSI1 entry from the hold queue to the
// outbox with a lease for this caller, and writes the action_taken event
// to the project and GLOBAL. Of any number of concurrent releases exactly
// one commits; the others fail the condition.
func (s *Store) release(ctx context.Context, a actionItem, by string, due bool) (*outboxEntry, error) {
	now := s.now()
	ts := Timestamp(now)
	lease := now.Add(DispatchLease).UnixMilli()
	upd := ddb.Expr{
		Update: "SET #executed = :true, #executedAt = :ts, #releasedBy = :by, #gsi1pk = :dispatch, #gsi1sk = :dispatchAt, #lease = :lease",
		Condition: "attribute_exists(#pk) AND #executed = :false AND attribute_not_exists(#cancelledAt)" +
			" AND #gsi1pk = :pending AND " + liveCond,
		Names: map[string]string{"#executed": contract.AttrExecuted, "#executedAt": contract.AttrExecutedAt, "#releasedBy": contract.AttrReleasedBy,
			"#gsi1pk": contract.AttrGSI1PK, "#gsi1sk": contract.AttrGSI1SK, "#lease": contract.AttrDispatchLease, "#pk": contract.AttrPK, "#cancelledAt": contract.AttrCancelledAt, "#ttl": contract.AttrTTL},
		Values: map[string]types.AttributeValue{
			":true": &types.AttributeValueMemberBOOL{Value: true}, ":false": &types.AttributeValueMemberBOOL{Value: false},
			":ts": ddb.S(ts), ":by": ddb.S(by), ":dispatch": ddb.S(contract.KeyHoldDispatch), ":dispatchAt": ddb.S(ts + "#" + a.ID),
			":lease": ddb.N(lease), ":pending": ddb.S(contract.KeyHoldPending), ":now": unixNumber(now),
		},
	}
	if due {
		upd.Condition += " AND #heldUntil <= :ts"
		upd.Names["#heldUntil"] = contract.AttrHeldUntil
	}
	_, events, err := s.eventWrites(NewEvent{
		ProjectID: a.ProjectID, EventType: EventTypeActionTaken, Severity: SeverityInfo,
		Summary: "Released " + a.ActionType + " (" + by + "): " + api.Truncate(a.Description, 200),
		Detail:  Doc(mustJSON(map[string]any{"actionId": a.ID, "actionType": a.ActionType, "heldUntil": a.HeldUntil, "releasedBy": by})),
	}, now)
	if err != nil {
		return nil, err
	}
	u := upd.TxUpdate(s.table, key(a.PK, a.SK))
	u.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	var tx ddb.Tx
	tx.Update(u, errNotHeld)
	err = storeError("TransactWriteItems", append(tx, events...).Run(ctx, s.client))
	if errors.Is(err, errNotHeld) {
		old, _ := ddb.FailedItem(err)
		return nil, heldState(old, a.ID, now, due)
	}
	if err != nil {
		return nil, err
	}
	a.Executed, a.ExecutedAt, a.ReleasedBy = true, ts, by
	a.GSI1PK, a.GSI1SK = contract.KeyHoldDispatch, ts+"#"+a.ID
	return &outboxEntry{a: a, lease: lease}, nil
}

// dispatch puts the events of entries on the bus, ten per call, and takes
// each sent one out of the outbox (if its lease is still the one it
// holds). It returns how many were sent. Without a bus configured it
// sends nothing and leaves them in the outbox.
func (s *Store) dispatch(ctx context.Context, entries []outboxEntry) (int, error) {
	if s.events == nil || s.bus == "" {
		return 0, errors.New("agenticpm: no event bus configured (" + contract.EnvEventBus + ")")
	}
	sent := 0
	var errs []error
	for start := 0; start < len(entries); {
		// A call takes up to 10 entries within 256 KB in all.
		var in []EventEntry
		size := 0
		var batch []outboxEntry
		for _, e := range entries[start:] {
			entry, n, err := s.eventEntry(e.a.Action)
			if err != nil {
				return sent, err
			}
			if len(in) == maxPutEventsEntries || len(in) > 0 && size+n > maxPutEventsBytes {
				break
			}
			in, batch, size = append(in, entry), append(batch, e), size+n
		}
		start += len(batch)
		results, err := s.events.PutEvents(ctx, in)
		if err != nil {
			errs = append(errs, fmt.Errorf("agenticpm: PutEvents: %w", err))
			continue
		}
		for i, r := range results {
			if i >= len(batch) {
				break
			}
			if r.ErrorCode != "" {
				errs = append(errs, fmt.Errorf("agenticpm: PutEvents entry of %s: %s: %s", batch[i].a.ID, r.ErrorCode, r.ErrorMessage))
				continue
			}
			if err := s.dispatched(ctx, batch[i], r.EventID); err != nil {
				errs = append(errs, err)
				continue
			}
			sent++
		}
	}
	return sent, errors.Join(errs...)
}

// dispatched takes a sent action out of the outbox. A failed condition
// means the lease ran out and another run took it over; that run sends the
// event again under the same idempotency key, so it is not an error here.
func (s *Store) dispatched(ctx context.Context, e outboxEntry, eventID string) error {
	var out actionItem
	err := s.update(ctx, e.a.PK, e.a.SK, ddb.Expr{
		Update:    "SET #dispatchedAt = :at, #eventId = :eventId REMOVE #gsi1pk, #gsi1sk, #lease",
		Condition: "#gsi1pk = :dispatch AND #lease = :lease",
		Names: map[string]string{"#dispatchedAt": contract.AttrDispatchedAt, "#eventId": contract.AttrEventID,
			"#gsi1pk": contract.AttrGSI1PK, "#gsi1sk": contract.AttrGSI1SK, "#lease": contract.AttrDispatchLease},
		Values: map[string]types.AttributeValue{":at": ddb.S(Timestamp(s.now())), ":eventId": ddb.S(eventID),
			":dispatch": ddb.S(contract.KeyHoldDispatch), ":lease": ddb.N(e.lease)},
	}, &out)
	if ddb.IsConditionFailed(err) {
		return nil
	}
	return err
}

// ReleaseReport is what one run of the release job did.
type ReleaseReport struct {
	// Due counts the held actions found due; Released those this run
	// released (the rest were released, cancelled or taken by someone
	// else in between).
	Due, Released int
	// Sent counts events put on the bus, of this run's releases and of
	// earlier ones left in the outbox.
	Sent int
	// Outbox counts earlier releases whose lease had run out.
	Outbox int
	// Overdue counts the due actions whose heldUntil lies more than
	// contract.OverdueGraceMinutes before the run: earlier runs should
	// have released them.
	Overdue int
}

// ReleaseDue releases every held action due at now (up to
// MaxReleasePerRun), then sends the events of those and of outbox entries
// whose lease ran out. Overlapping runs and API calls are safe: the
// release transaction lets one caller through per action, and an outbox
// entry is sent by whoever holds its lease.
func (s *Store) ReleaseDue(ctx context.Context) (*ReleaseReport, error) {
	now := s.now()
	rep := &ReleaseReport{}
	due, err := s.queryHold(ctx, holdQuery(contract.KeyHoldPending, now))
	if err != nil {
		return rep, err
	}
	rep.Due = len(due)
	grace := Timestamp(now.Add(-contract.OverdueGraceMinutes * time.Minute))
	for _, a := range due {
		if a.HeldUntil != "" && a.HeldUntil < grace {
			rep.Overdue++
		}
	}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		ready []outboxEntry
		errs  []error
		work  = make(chan actionItem)
	)
	for range releaseWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range work {
				e, err := s.release(ctx, a, ReleasedBySchedule, true)
				mu.Lock()
				switch {
				case err == nil:
					ready = append(ready, *e)
				case errors.Is(err, ErrStatusConflict), errors.Is(err, ErrNotDue), errors.Is(err, ErrNotFound), errors.Is(err, ErrBusy):
					// Someone else released or cancelled it, or the index
					// was behind: nothing to do.
				default:
					errs = append(errs, fmt.Errorf("release %s: %w", a.ID, err))
				}
				mu.Unlock()
			}
		}()
	}
	for _, a := range due {
		work <- a
	}
	close(work)
	wg.Wait()
	rep.Released = len(ready)
	stale := holdQuery(contract.KeyHoldDispatch, now)
	stale.Filter = "#lease < :nowMilli"
	stale.Names["#lease"], stale.Values[":nowMilli"] = contract.AttrDispatchLease, ddb.N(now.UnixMilli())
	old, err := s.queryHold(ctx, stale)
	if err != nil {
		errs = append(errs, err)
	}
	for _, a := range old {
		e, ok, err := s.claim(ctx, a, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			rep.Outbox++
			ready = append(ready, e)
		}
	}
	sent, err := s.dispatch(ctx, ready)
	rep.Sent = sent
	if err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

// claim takes over the lease of an outbox entry whose lease ran out,
// conditioned on the lease read, so one of several runs gets it.
func (s *Store) claim(ctx context.Context, a actionItem, now time.Time) (outboxEntry, bool, error) {
	lease := now.Add(DispatchLease).UnixMilli()
	var out actionItem
	err := s.update(ctx, a.PK, a.SK, ddb.Expr{
		Update: "SET #lease = :lease", Condition: "#gsi1pk = :dispatch AND #lease = :held",
		Names: map[string]string{"#lease": contract.AttrDispatchLease, "#gsi1pk": contract.AttrGSI1PK},
		Values: map[string]types.AttributeValue{":lease": ddb.N(lease),
			":dispatch": ddb.S(contract.KeyHoldDispatch), ":held": ddb.N(a.DispatchLease)},
	}, &out)
	if ddb.IsConditionFailed(err) {
		return outboxEntry{}, false, nil
	}
	if err != nil {
		return outboxEntry{}, false, err
	}
	return outboxEntry{a: out, lease: lease}, true, nil
}

// holdQuery is the query of the GSI1 entries of hold partition pk up to
// now (their sort key is a time, then "#" and the id), written out.
func holdQuery(pk string, now time.Time) ddb.Expr {
	return ddb.Expr{
		KeyCondition: "#gsi1pk = :pk AND #gsi1sk <= :until",
		Names:        map[string]string{"#gsi1pk": contract.AttrGSI1PK, "#gsi1sk": contract.AttrGSI1SK},
		Values:       map[string]types.AttributeValue{":pk": ddb.S(pk), ":until": ddb.S(Timestamp(now) + "#~")},
	}
}

// queryHold reads the GSI1 entries of q (holdQuery, perhaps with a
// filter) in key order (due time, or release time for the outbox), up to
// MaxReleasePerRun.
func (s *Store) queryHold(ctx context.Context, q ddb.Expr) ([]actionItem, error) {
	in := q.Query(s.table)
	in.IndexName = aws.String(contract.IndexGSI1)
	var out []actionItem
	for item, err := range ddb.All(ctx, s.client, in) {
		if err != nil {
			return nil, storeError("Query", err)
		}
		var a actionItem
		if err := attributevalue.UnmarshalMap(item, &a); err != nil {
			return nil, fmt.Errorf("agenticpm: unmarshal action: %w", err)
		}
		if out = append(out, a); len(out) == MaxReleasePerRun {
			break
		}
	}
	return out, nil
}

// CancelAction takes a held action out of the hold queue for good.
func (s *Store) CancelAction(ctx context.Context, projectID, id string) (*Action, error) {
	a, err := s.actionItemByID(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	now := s.now()
	token := uuid.NewString()
	var out actionItem
	err = s.update(ctx, a.PK, a.SK, ddb.Expr{
		Update:    "SET #cancelledAt = :at, #token = :token REMOVE #gsi1pk, #gsi1sk",
		Condition: "attribute_exists(#pk) AND #executed = :false AND attribute_not_exists(#cancelledAt) AND #gsi1pk = :pending",
		Names: map[string]string{"#cancelledAt": contract.AttrCancelledAt, "#token": contract.AttrWriteToken, "#gsi1pk": contract.AttrGSI1PK, "#gsi1sk": contract.AttrGSI1SK,
			"#pk": contract.AttrPK, "#executed": contract.AttrExecuted},
		Values: map[string]types.AttributeValue{":at": ddb.S(Timestamp(now)), ":token": ddb.S(token),
			":false": &types.AttributeValueMemberBOOL{Value: false}, ":pending": ddb.S(contract.KeyHoldPending)},
	}, &out)
	if old, failed := ddb.FailedItem(err); failed {
		var mine actionItem
		if attributevalue.UnmarshalMap(old, &mine) == nil && mine.WriteToken == token {
			return &mine.Action, nil // this request's own cancel, its answer lost
		}
		return nil, heldState(old, id, now, false)
	}
	if err != nil {
		return nil, err
	}
	return &out.Action, nil
}

// ListHeldActions returns the held actions of every project, the one due
// first first. It reads GSI1, so a release or cancel a moment ago can
// still show.
func (s *Store) ListHeldActions(ctx context.Context, after string, limit int) (*Page[Action], error) {
	return listPage[Action](ctx, s, listing{view: "held-actions", index: true, pk: contract.KeyHoldPending}, after, limit)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return b
}

// actionItemByID reads one action of a project as stored.
func (s *Store) actionItemByID(ctx context.Context, projectID, id string) (actionItem, error) {
	var a actionItem
	item, err := s.actionByID(ctx, projectID, id)
	if err != nil {
		return a, err
	}
	if err := attributevalue.UnmarshalMap(item, &a); err != nil {
		return a, fmt.Errorf("agenticpm: unmarshal action: %w", err)
	}
	return a, nil
}
