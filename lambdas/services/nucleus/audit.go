package nucleus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Action is what an audit entry records.
type Action string

// Actions. CREATE, UPDATE and DELETE are written by the service with the
// change they record; EXECUTE comes from the scheduler (RecordExecution).
const (
	ActionCreate  Action = "CREATE"
	ActionUpdate  Action = "UPDATE"
	ActionDelete  Action = "DELETE"
	ActionExecute Action = "EXECUTE"
)

// AuditStatus is the outcome an audit entry records.
type AuditStatus string

// Audit statuses.
const (
	StatusSuccess AuditStatus = "SUCCESS"
	StatusFail    AuditStatus = "FAIL"
)

// AuditEntry is one audit log entry, as returned.
type AuditEntry struct {
	EntityType EntityType `json:"entity_type"`
	EntityID   string     `json:"entity_id,omitempty"`
	// Timestamp is when the entry was written; EntryID (a ULID) tells apart
	// entries of the same instant.
	Timestamp string          `json:"timestamp"`
	EntryID   string          `json:"entry_id"`
	Action    Action          `json:"action"`
	UserID    string          `json:"user_id"`
	Status    AuditStatus     `json:"status"`
	Details   json.RawMessage `json:"details"`
	// ExpireAt is when DynamoDB may delete the entry (epoch seconds).
	ExpireAt int64 `json:"expire_at"`
}

// auditItem is the stored form. details is a JSON string, as the document
// says: a DynamoDB map would turn numbers into float64 on the way back.
type auditItem struct {
	PK       string
	SK       string
	GSI1PK   string
	GSI1SK   string
	Action   Action      `dynamodbav:"action"`
	UserID   string      `dynamodbav:"user_id"`
	Details  string      `dynamodbav:"details"`
	Status   AuditStatus `dynamodbav:"status"`
	ExpireAt int64       `dynamodbav:"expire_at"`
}

// entry builds the audit entry of a change made at now. details is
// marshalled to JSON; a json.RawMessage is stored compacted.
func (s *Store) entry(now time.Time, user string, e Entity, action Action, status AuditStatus, details any) (*AuditEntry, error) {
	var raw []byte
	if m, ok := details.(json.RawMessage); ok {
		var buf bytes.Buffer
		if err := json.Compact(&buf, m); err != nil {
			return nil, fmt.Errorf("nucleus: audit details: %w", err)
		}
		raw = buf.Bytes()
	} else {
		var err error
		if raw, err = json.Marshal(details); err != nil {
			return nil, fmt.Errorf("nucleus: audit details: %w", err)
		}
	}
	if len(raw) > MaxDetailsBytes {
		return nil, fmt.Errorf("%w: audit details of %d bytes exceed %d", ErrTooLarge, len(raw), MaxDetailsBytes)
	}
	if e.Type == EntityGlobal {
		e.ID = ""
	}
	return &AuditEntry{
		EntityType: e.Type, EntityID: e.ID,
		Timestamp: Timestamp(now), EntryID: s.newEntryID(now),
		Action: action, UserID: user, Status: status, Details: raw,
		ExpireAt: now.Add(Retention).Unix(),
	}, nil
}

// auditPut is the conditional Put of an audit entry: attribute_not_exists
// keeps an entry from ever being overwritten (Decision 5).
func (s *Store) auditPut(e *AuditEntry) (ddb.TxOp, error) {
	sk := contract.AuditSK(e.Timestamp, e.EntryID)
	item, err := ddb.MarshalItem(auditItem{
		PK: Entity{e.EntityType, e.EntityID}.key(), SK: sk, GSI1PK: contract.KeyAuditGlobal, GSI1SK: sk,
		Action: e.Action, UserID: e.UserID, Details: string(e.Details), Status: e.Status, ExpireAt: e.ExpireAt,
	}, keyAttrs...)
	if err != nil {
		return ddb.TxOp{}, fmt.Errorf("nucleus: marshal audit entry: %w", err)
	}
	return s.put(s.tables.Audit, item, pkAbsent, ErrAuditCollision)
}

func (it *auditItem) entry() *AuditEntry {
	e := entityOf(it.PK)
	ts, id, _ := strings.Cut(strings.TrimPrefix(it.SK, contract.PrefixTimestamp), "#")
	details := json.RawMessage(it.Details)
	if !json.Valid(details) {
		// Written by someone else; still show it rather than fail the page.
		details, _ = json.Marshal(it.Details)
	}
	return &AuditEntry{EntityType: e.Type, EntityID: e.ID, Timestamp: ts, EntryID: id, Action: it.Action,
		UserID: it.UserID, Status: it.Status, Details: details, ExpireAt: it.ExpireAt}
}

// Execution is the input of RecordExecution.
type Execution struct {
	Entity  Entity
	Status  AuditStatus
	Details json.RawMessage // a JSON object; nil for {}
}

// RecordExecution writes an EXECUTE entry, e.g. the scheduler starting or
// stopping a schedule's resources. The entity must exist (checked in the
// same transaction). On an account, the execution is its connection test
// (see RecordTest).
func (s *Store) RecordExecution(ctx context.Context, user string, in Execution) (*AuditEntry, error) {
	if in.Status != StatusSuccess && in.Status != StatusFail {
		return nil, fmt.Errorf("nucleus: unknown audit status %q", in.Status)
	}
	details := in.Details
	if details == nil {
		details = json.RawMessage(`{}`)
	}
	if in.Entity.Type == EntityAccount {
		return s.RecordTest(ctx, user, in.Entity.ID, in.Status, details)
	}
	entry, err := s.entry(s.now(), user, in.Entity, ActionExecute, in.Status, details)
	if err != nil {
		return nil, err
	}
	var ops []ddb.TxOp
	switch in.Entity.Type {
	case EntitySchedule:
		ops = append(ops, s.check(scheduleKey(in.Entity.ID), pkPresent, ErrScheduleNotFound))
	case EntityGlobal:
	default:
		return nil, fmt.Errorf("nucleus: unknown entity type %q", in.Entity.Type)
	}
	if err := s.transact(ctx, entry, ops...); err != nil {
		return nil, err
	}
	return entry, nil
}

// errNewerTest: the account records a test newer than this one.
var errNewerTest = errors.New("nucleus: a newer connection test is recorded")

// RecordTest records a connection test of an account: an EXECUTE entry on
// the account and, in the same transaction, last_test_run_at and
// last_test_status, conditioned on last_test_run_at being older than this
// test, so that it only moves forward when tests race. A test that lost
// that race is still logged (the entry and an existence check, without
// the update).
func (s *Store) RecordTest(ctx context.Context, user, accountID string, status AuditStatus, details any) (*AuditEntry, error) {
	entry, err := s.entry(s.now(), user, Entity{EntityAccount, accountID}, ActionExecute, status, details)
	if err != nil {
		return nil, err
	}
	// The account exists, and has no test recorded or an older one.
	op := s.update(accountKey(accountID), ddb.Expr{
		Update:    "SET #at = :at, #status = :status",
		Condition: "attribute_exists(#pk) AND (attribute_not_exists(#at) OR #at < :at)",
		Names:     map[string]string{"#at": contract.AttrLastTestRunAt, "#status": contract.AttrLastTestStatus, "#pk": contract.AttrPK},
		Values:    map[string]types.AttributeValue{":at": ddb.S(entry.Timestamp), ":status": ddb.S(status)},
	}, ddb.MissingOr(ErrAccountNotFound, errNewerTest))
	err = s.transact(ctx, entry, op)
	if errors.Is(err, errNewerTest) {
		err = s.transact(ctx, entry, s.check(accountKey(accountID), pkPresent, ErrAccountNotFound))
	}
	if err != nil {
		return nil, err
	}
	return entry, nil
}

// AuditQuery selects a page of audit entries, newest first.
type AuditQuery struct {
	// Entity selects one entity's log; nil selects the global timeline.
	Entity *Entity
	// Since (inclusive) and Until (exclusive) bound the entries' time;
	// zero means unbounded.
	Since, Until time.Time
	Limit        int
	Cursor       string
}

// AuditPage is one page of audit entries.
type AuditPage struct {
	Entries []AuditEntry `json:"entries"`
	// Next is the cursor of the next page, "" on the last page.
	Next string `json:"next_cursor,omitempty"`
}

// AuditLog returns audit entries newest first: one entity's (table query on
// its pk) or all (GSI1, AUDIT#GLOBAL; eventually consistent).
//
// Expired entries are hidden although DynamoDB deletes them only within
// days: the key condition starts at now-Retention (so they are not even
// read) and a filter on expire_at > now catches entries whose expiry was
// set otherwise.
func (s *Store) AuditLog(ctx context.Context, q AuditQuery) (*AuditPage, error) {
	now := s.now()
	lower := contract.PrefixTimestamp + Timestamp(now.Add(-Retention))
	if !q.Since.IsZero() {
		lower = max(lower, contract.PrefixTimestamp+Timestamp(q.Since))
	}
	upper := ""
	if !q.Until.IsZero() {
		upper = contract.PrefixTimestamp + Timestamp(q.Until)
	}
	l := listing{table: s.tables.Audit, size: pageSize(q.Limit), below: lower}
	// The partition is pk, or gsi1pk in GSI1; the sort key is sk or
	// gsi1sk. The filter hides expired entries.
	l.expr = ddb.Expr{
		KeyCondition: "#pk = :pk AND #sk >= :lower",
		Filter:       "#expire > :now",
		Names:        map[string]string{"#pk": contract.AttrPK, "#sk": contract.AttrSK, "#expire": contract.AttrExpireAt},
		Values:       map[string]types.AttributeValue{":lower": ddb.S(lower), ":now": ddb.N(now.Unix())},
	}
	if q.Entity == nil {
		l.index, l.partition = true, contract.KeyAuditGlobal
		l.scope = "nucleus/audit/timeline"
		l.expr.Names["#pk"], l.expr.Names["#sk"] = contract.AttrGSI1PK, contract.AttrGSI1SK
	} else {
		l.partition = q.Entity.key()
		l.scope = "nucleus/audit/entity/" + l.partition
		// The entity's own partition: read it as it is now.
		l.consistent = true
	}
	l.expr.Values[":pk"] = ddb.S(l.partition)
	l.scope += "?since=" + timeParam(q.Since) + "&until=" + timeParam(q.Until)
	l.above = upper
	if upper != "" {
		if upper <= lower {
			// BETWEEN with bounds the wrong way round is a
			// ValidationException; the range is empty anyway.
			if err := s.query(l).Valid(q.Cursor); err != nil {
				return nil, err
			}
			return &AuditPage{Entries: []AuditEntry{}}, nil
		}
		l.expr.KeyCondition = "#pk = :pk AND #sk BETWEEN :lower AND :upper"
		l.expr.Values[":upper"] = ddb.S(upper)
	}
	items, next, err := s.list(ctx, l, q.Cursor)
	if err != nil {
		return nil, err
	}
	page := &AuditPage{Entries: make([]AuditEntry, 0, len(items)), Next: next}
	for _, item := range items {
		var it auditItem
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return nil, fmt.Errorf("nucleus: unmarshal audit entry: %w", err)
		}
		page.Entries = append(page.Entries, *it.entry())
	}
	return page, nil
}

func timeParam(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return Timestamp(t)
}
