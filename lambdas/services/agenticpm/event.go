package agenticpm

import (
	"context"
	"time"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Event is an entry of a project's activity feed (PK PROJECT#<id>, SK
// EVENT#<ts>#<id>), or of the global feed only when it has no project.
type Event struct {
	ID        string   `dynamodbav:"id" json:"id"`
	ProjectID string   `dynamodbav:"projectId,omitempty" json:"projectId,omitempty"`
	EventType string   `dynamodbav:"eventType" json:"eventType"`
	Severity  Severity `dynamodbav:"severity" json:"severity"`
	Summary   string   `dynamodbav:"summary" json:"summary"`
	Detail    Doc      `dynamodbav:"detail,omitempty" json:"detail,omitempty"`
	CreatedAt string   `dynamodbav:"createdAt" json:"createdAt"`
}

type eventItem struct {
	keys
	Event
}

// NewEvent is the input of RecordEvent; an empty ProjectID records a
// global event.
type NewEvent struct {
	ProjectID string
	EventType string
	Severity  Severity
	Summary   string
	Detail    Doc
}

// RecordEvent stores an event; it expires after EventRetention.
//
// A project event is written twice in one transaction (decision 3): to the
// project partition, with detail and the GSI1 keys of the date view, and as
// a GLOBAL reference without either (the date view would list it twice,
// and the feed does not need the detail). A ConditionCheck on the project
// keeps both from being written for a project that does not exist. An
// event without a project is written once, under GLOBAL, with detail and
// the GSI1 keys.
func (s *Store) RecordEvent(ctx context.Context, in NewEvent) (*Event, error) {
	t := s.now()
	e, writes, err := s.eventWrites(in, t)
	if err != nil {
		return nil, err
	}
	if in.ProjectID == "" {
		if err := s.create(ctx, writes[0].Item.Put.Item); err != nil {
			return nil, err
		}
		return e, nil
	}
	if err := s.transactInProject(ctx, in.ProjectID, writes); err != nil {
		return nil, err
	}
	return e, nil
}

// eventWrites builds the Puts of an event recorded at t: the project copy
// and its GLOBAL reference, or the one GLOBAL item of an event without a
// project.
func (s *Store) eventWrites(in NewEvent, t time.Time) (*Event, ddb.Tx, error) {
	ts := Timestamp(t)
	id := s.newULID(t)
	e := Event{ID: id, ProjectID: in.ProjectID, EventType: in.EventType, Severity: in.Severity,
		Summary: in.Summary, Detail: in.Detail, CreatedAt: ts}
	if e.Detail.IsNull() {
		e.Detail = nil
	}
	sk := contract.EventSK(ts, id)
	ttl := expiry(t, EventRetention)
	dated := keys{SK: sk, GSI1PK: contract.EventDateGSI1PK(dateOf(ts)), GSI1SK: ts + "#" + id, TTL: ttl}
	if in.ProjectID == "" {
		dated.PK = contract.KeyGlobal
		put, err := s.putNew(eventItem{keys: dated, Event: e}, nil)
		if err != nil {
			return nil, nil, err
		}
		return &e, ddb.Tx{put}, nil
	}
	dated.PK = contract.ProjectPK(in.ProjectID)
	putOwn, err := s.putNew(eventItem{keys: dated, Event: e}, nil)
	if err != nil {
		return nil, nil, err
	}
	ref := e
	ref.Detail = nil
	putGlobal, err := s.putNew(eventItem{keys: keys{PK: contract.KeyGlobal, SK: sk, TTL: ttl}, Event: ref}, nil)
	if err != nil {
		return nil, nil, err
	}
	return &e, ddb.Tx{putOwn, putGlobal}, nil
}

// ListProjectEvents returns a project's live events, newest first.
func (s *Store) ListProjectEvents(ctx context.Context, projectID, after string, limit int) (*Page[Event], error) {
	return listUnder[Event](ctx, s, projectID, listing{view: "project-events", pk: contract.ProjectPK(projectID),
		prefix: contract.PrefixEvent, newestFirst: true}, after, limit)
}

// ListGlobalEvents returns the global feed, newest first: references to
// project events (without detail) and events without a project.
func (s *Store) ListGlobalEvents(ctx context.Context, after string, limit int) (*Page[Event], error) {
	return listPage[Event](ctx, s, listing{view: "global-events", pk: contract.KeyGlobal, prefix: contract.PrefixEvent, newestFirst: true}, after, limit)
}

// ListEventsByDate returns the events of one UTC date (YYYY-MM-DD) across
// projects, newest first, with detail. It reads GSI1, so an event recorded
// a moment ago can be missing for a short while.
func (s *Store) ListEventsByDate(ctx context.Context, date, after string, limit int) (*Page[Event], error) {
	return listPage[Event](ctx, s, listing{view: "events-by-date", index: true, pk: contract.EventDateGSI1PK(date), newestFirst: true}, after, limit)
}
