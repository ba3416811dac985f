package nucleus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Schedule is a user-defined start/stop schedule, as stored and returned.
type Schedule struct {
	ScheduleID   string `dynamodbav:"-" json:"schedule_id"`
	ScheduleName string `dynamodbav:"schedule_name" json:"schedule_name"`
	StartCron    string `dynamodbav:"start_cron" json:"start_cron"`
	EndCron      string `dynamodbav:"end_cron" json:"end_cron"`
	Timezone     string `dynamodbav:"timezone" json:"timezone"`
	Enabled      bool   `dynamodbav:"enabled" json:"enabled"`
	CreatedAt    string `dynamodbav:"created_at" json:"created_at"`
	UpdatedAt    string `dynamodbav:"updated_at" json:"updated_at"`
}

type scheduleItem struct {
	PK      string
	SK      string
	GSI1PK  string
	GSI1SK  string
	Version int64 `dynamodbav:"version"`
	// ResourceVersion moves with every attach and detach (absent before
	// the first), so a delete that read the resources can condition on
	// none having come or gone since.
	ResourceVersion int64 `dynamodbav:"resource_version,omitempty"`
	// TimingChangedAt is when the crons, the time zone or the enabled
	// flag last changed (absent on schedules written before it: their
	// updated_at stands in): the executor acts on no fire from before it,
	// and a rename does not move it, so a fire due but not yet executed
	// survives one.
	TimingChangedAt string `dynamodbav:"timing_changed_at,omitempty"`
	Schedule
}

// timingChangedAt is when the schedule's timing last changed, as far as
// its item tells.
func (it *scheduleItem) timingChangedAt() string {
	if it.TimingChangedAt != "" {
		return it.TimingChangedAt
	}
	return it.UpdatedAt
}

func scheduleKey(id string) itemKey {
	return itemKey{PK: contract.PrefixSchedule + id, SK: contract.KeyMetadata}
}

func (it *scheduleItem) schedule() *Schedule {
	sc := it.Schedule
	sc.ScheduleID = strings.TrimPrefix(it.PK, contract.PrefixSchedule)
	return &sc
}

// NewSchedule is the input of CreateSchedule.
type NewSchedule struct {
	ScheduleName string
	StartCron    string
	EndCron      string
	Timezone     string
	Enabled      bool
}

// CreateSchedule stores a new schedule under a new UUID.
func (s *Store) CreateSchedule(ctx context.Context, user string, in NewSchedule) (*Schedule, error) {
	if in.StartCron == in.EndCron {
		return nil, ErrSameCron
	}
	now := s.now()
	ts := Timestamp(now)
	key := scheduleKey(s.newID())
	it := scheduleItem{PK: key.PK, SK: key.SK, GSI1PK: contract.KeyTypeSchedule, GSI1SK: in.ScheduleName, Version: 1, TimingChangedAt: ts,
		Schedule: Schedule{ScheduleName: in.ScheduleName, StartCron: in.StartCron, EndCron: in.EndCron,
			Timezone: in.Timezone, Enabled: in.Enabled, CreatedAt: ts, UpdatedAt: ts}}
	item, err := ddb.MarshalItem(it, keyAttrs...)
	if err != nil {
		return nil, fmt.Errorf("nucleus: marshal schedule: %w", err)
	}
	// A v4 UUID does not collide in practice; the condition makes the
	// impossible case an error instead of a silent overwrite.
	put, err := s.put(s.tables.App, item, pkAbsent, errors.New("nucleus: schedule id collision"))
	if err != nil {
		return nil, err
	}
	sc := it.schedule()
	if err := s.commit(ctx, now, user, Entity{EntitySchedule, sc.ScheduleID}, ActionCreate, sc, put); err != nil {
		return nil, err
	}
	return sc, nil
}

// ScheduleDetail is a schedule with one page of its resources.
type ScheduleDetail struct {
	Schedule  *Schedule  `json:"schedule"`
	Resources []Resource `json:"resources"`
	// Next is the cursor of the next page of resources, "" on the last.
	Next string `json:"next_cursor,omitempty"`
}

// Schedule returns the schedule with id and a page of its resources (by
// ARN). The first page is the document's "Get Schedule and all its
// Resources": one strongly consistent Query of the schedule's partition
// returns the METADATA item and the RESOURCE# items. Later pages (cursor)
// query on from the cursor and read the schedule by key.
func (s *Store) Schedule(ctx context.Context, id, cursorToken string, limit int) (*ScheduleDetail, error) {
	key := scheduleKey(id)
	var meta map[string]types.AttributeValue
	l := listing{
		table: s.tables.App, partition: key.PK, forward: true, size: pageSize(limit), consistent: true,
		scope: "nucleus/schedule/" + id,
		expr:  partition(contract.AttrPK, key.PK),
		keep: func(item map[string]types.AttributeValue) bool {
			if sk, ok := item[contract.AttrSK].(*types.AttributeValueMemberS); ok && sk.Value == contract.KeyMetadata {
				meta = item
				return false
			}
			return true
		},
	}
	if cursorToken == "" {
		// METADATA sorts before RESOURCE#: the first round returns it.
		l.slack = 1
	}
	items, next, err := s.list(ctx, l, cursorToken)
	if err != nil {
		return nil, err
	}
	var it scheduleItem
	switch {
	case meta != nil:
		if err := attributevalue.UnmarshalMap(meta, &it); err != nil {
			return nil, fmt.Errorf("nucleus: unmarshal schedule: %w", err)
		}
	default:
		found, err := s.get(ctx, key, &it)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, ErrScheduleNotFound
		}
	}
	d := &ScheduleDetail{Schedule: it.schedule(), Resources: make([]Resource, 0, len(items)), Next: next}
	for _, item := range items {
		r, err := unmarshalResource(item)
		if err != nil {
			return nil, err
		}
		d.Resources = append(d.Resources, *r)
	}
	return d, nil
}

func (s *Store) scheduleItem(ctx context.Context, id string) (*scheduleItem, error) {
	var it scheduleItem
	found, err := s.get(ctx, scheduleKey(id), &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrScheduleNotFound
	}
	return &it, nil
}

// SchedulePatch is the input of UpdateSchedule; nil fields stay unchanged.
type SchedulePatch struct {
	ScheduleName *string
	StartCron    *string
	EndCron      *string
	Timezone     *string
	Enabled      *bool
}

// UpdateSchedule changes a schedule and records old and new values in the
// audit entry; see UpdateAccount for the version condition. A rename sets
// schedule_name and gsi1sk in the same update, so the alphabetical list
// follows it. A patch that changes nothing writes nothing.
func (s *Store) UpdateSchedule(ctx context.Context, user, id string, p SchedulePatch) (*Schedule, error) {
	for range updateAttempts {
		cur, err := s.scheduleItem(ctx, id)
		if err != nil {
			return nil, err
		}
		next := *cur
		ch := changes{}
		if p.ScheduleName != nil && ch.add(contract.AttrScheduleName, cur.ScheduleName, *p.ScheduleName) {
			next.ScheduleName, next.GSI1SK = *p.ScheduleName, *p.ScheduleName
		}
		if p.StartCron != nil && ch.add(contract.AttrStartCron, cur.StartCron, *p.StartCron) {
			next.StartCron = *p.StartCron
		}
		if p.EndCron != nil && ch.add(contract.AttrEndCron, cur.EndCron, *p.EndCron) {
			next.EndCron = *p.EndCron
		}
		if p.Timezone != nil && ch.add(contract.AttrTimezone, cur.Timezone, *p.Timezone) {
			next.Timezone = *p.Timezone
		}
		if p.Enabled != nil && ch.add(contract.AttrEnabled, cur.Enabled, *p.Enabled) {
			next.Enabled = *p.Enabled
		}
		if len(ch) == 0 {
			return cur.schedule(), nil
		}
		if next.StartCron == next.EndCron {
			return nil, ErrSameCron
		}
		now := s.now()
		next.UpdatedAt = Timestamp(now)
		next.Version = cur.Version + 1
		upd := ddb.Expr{
			Update: "SET #name = :name, #gsi1sk = :gsi1sk, #start = :start, #end = :end, #tz = :tz, #enabled = :enabled, #updated = :updated, #version = :version",
			Names: map[string]string{"#name": contract.AttrScheduleName, "#gsi1sk": contract.AttrGSI1SK, "#start": contract.AttrStartCron, "#end": contract.AttrEndCron,
				"#tz": contract.AttrTimezone, "#enabled": contract.AttrEnabled, "#updated": contract.AttrUpdatedAt, "#version": contract.AttrVersion},
			Values: map[string]types.AttributeValue{":name": ddb.S(next.ScheduleName), ":gsi1sk": ddb.S(next.GSI1SK),
				":start": ddb.S(next.StartCron), ":end": ddb.S(next.EndCron), ":tz": ddb.S(next.Timezone), ":enabled": ddb.Bool(next.Enabled),
				":updated": ddb.S(next.UpdatedAt), ":version": ddb.N(next.Version)},
		}
		if ch.any(contract.AttrStartCron, contract.AttrEndCron, contract.AttrTimezone, contract.AttrEnabled) {
			next.TimingChangedAt = next.UpdatedAt
			upd.Update += ", #timing = :updated"
			upd.Names["#timing"] = contract.AttrTimingChangedAt
		}
		upd.Condition = versionIs(cur.Version, upd.Values)
		op := s.update(scheduleKey(id), upd, ddb.MissingOr(ErrScheduleNotFound, errStale))
		err = s.commit(ctx, now, user, Entity{EntitySchedule, id}, ActionUpdate, map[string]any{"changes": ch}, op)
		if errors.Is(err, errStale) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return next.schedule(), nil
	}
	return nil, ErrConcurrentUpdate
}

// ErrSameCron: start_cron and end_cron would be equal, so the schedule
// would start and stop its resources at the same moment.
var ErrSameCron = api.InvalidKind("nucleus: start_cron and end_cron are equal",
	api.FieldError{Field: contract.AttrEndCron, Message: "must differ from start_cron"})

// SchedulePage is one page of schedules, by name.
type SchedulePage struct {
	Schedules []Schedule `json:"schedules"`
	// Next is the cursor of the next page, "" on the last page.
	Next string `json:"next_cursor,omitempty"`
}

// Schedules lists schedules alphabetically by name (UTF-8 byte order) from
// GSI1, eventually consistent: a new or renamed schedule may take a moment
// to appear in its place.
func (s *Store) Schedules(ctx context.Context, cursorToken string, limit int) (*SchedulePage, error) {
	l := listing{
		table: s.tables.App, index: true, partition: contract.KeyTypeSchedule, forward: true, size: pageSize(limit),
		scope: "nucleus/schedules",
		expr:  partition(contract.AttrGSI1PK, contract.KeyTypeSchedule),
	}
	items, next, err := s.list(ctx, l, cursorToken)
	if err != nil {
		return nil, err
	}
	page := &SchedulePage{Schedules: make([]Schedule, 0, len(items)), Next: next}
	for _, item := range items {
		var it scheduleItem
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return nil, fmt.Errorf("nucleus: unmarshal schedule: %w", err)
		}
		page.Schedules = append(page.Schedules, *it.schedule())
	}
	return page, nil
}
