package agenticpm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/eventbus"
)

const bus = "agenticpm-dev"

// holdService is the API and the release job on one table and one clock,
// sending to a loopback EventBridge that decodes the real protocol.
type holdService struct {
	*service
	clock  *apitest.Clock
	events *awsloop.Events
	// jobClient is the release job's, recorded as that function's.
	jobClient *dynamodb.Client
}

func newHoldService(t *testing.T, withBus bool) *holdService {
	t.Helper()
	fake := awsloop.NewEvents(bus)
	require.NoError(t, fake.Start(), "loopback EventBridge")
	t.Cleanup(func() { _ = fake.Close() })
	clock := apitest.NewClock(time.Now().UTC(), time.Millisecond)
	s := newServiceWith(t, clock.Now, func(cfg *agenticpm.Config) {
		if !withBus {
			return
		}
		cfg.EventBus = bus
		cfg.Events = eventbus.NewEvents(awsloop.ConfigAt("AKIDAGENTICPM", fake.URL()))
	})
	return &holdService{service: s, clock: clock, events: fake, jobClient: testenv.ServiceClient(t, contract.Release.Name)}
}

// job is a release job as its own Lambda would build it: a fresh instance
// on the same configuration.
func (s *holdService) job() *agenticpm.ReleaseJob {
	cfg := s.cfg
	cfg.Client = s.jobClient
	return agenticpm.NewReleaseJobFromConfig(cfg)
}

// hold records an action held until until. An until sooner than
// agenticpm.MinHold ahead (an action due now) is recorded as its agent
// would have recorded it, MinHold before until, and the clock put back.
func (s *holdService) hold(t *testing.T, projectID, desc string, until time.Time) agenticpm.Action {
	t.Helper()
	if now := s.clock.Now(); until.Before(now.Add(agenticpm.MinHold)) {
		s.clock.Set(until.Add(-agenticpm.MinHold - time.Second))
		defer s.clock.Set(now)
	}
	var a agenticpm.Action
	body := fmt.Sprintf(`{"actionType":"email_sent","description":%q,"heldUntil":%q}`, desc, until.Format(time.RFC3339Nano))
	s.MustRoute(t, 201, contract.RecordAction, body, &a, projectID)
	return a
}

func (s *holdService) held(t *testing.T) []string {
	t.Helper()
	got, _ := all[agenticpm.Action](t, s.service, contract.ListHeldActions.URLQuery(svc.Values{svc.Limit: "2"}))
	var out []string
	for _, a := range got {
		out = append(out, a.Description)
	}
	return out
}

// details decodes the events on the fake bus.
func (s *holdService) details(t *testing.T) []agenticpm.EventDetail {
	t.Helper()
	var out []agenticpm.EventDetail
	for _, e := range s.events.Events() {
		assert.Equal(t, bus, e.Bus, "event bus")
		assert.Equal(t, agenticpm.EventSource, e.Source, "event source")
		assert.Equal(t, agenticpm.EventDetailType, e.DetailType, "event detail type")
		assert.Equal(t, "AKIDAGENTICPM", e.AccessKeyID, "event signed with")
		var d agenticpm.EventDetail
		require.NoError(t, json.Unmarshal([]byte(e.Detail), &d), "event detail")
		out = append(out, d)
	}
	return out
}

// feedCount counts action_taken events in a project's feed and in GLOBAL.
func (s *holdService) feedCount(t *testing.T, projectID string) (project, global int) {
	t.Helper()
	pe, _ := all[agenticpm.Event](t, s.service, contract.ListProjectEvents.URL(projectID)+"?")
	ge, _ := all[agenticpm.Event](t, s.service, contract.ListEvents.URL()+"?")
	for _, e := range pe {
		if e.EventType == agenticpm.EventTypeActionTaken {
			project++
		}
	}
	for _, e := range ge {
		if e.EventType == agenticpm.EventTypeActionTaken && e.ProjectID == projectID {
			global++
		}
	}
	return project, global
}

func TestHoldQueue(t *testing.T) {
	s := newHoldService(t, true)
	p := s.project(t, "")
	now := s.clock.Now()
	late := s.hold(t, p.ID, "later", now.Add(2*time.Hour))
	due := s.hold(t, p.ID, "due", now.Add(-time.Minute))
	soon := s.hold(t, p.ID, "soon", now.Add(time.Hour))
	gone := s.hold(t, p.ID, "cancel me", now.Add(-2*time.Minute))
	var plain agenticpm.Action
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"jira_update","description":"not held"}`, &plain, p.ID)

	// The hold queue lists held actions by due time, across projects.
	require.Equal(t, []string{"cancel me", "due", "soon", "later"}, s.held(t), "held")

	// Cancel takes it out for good.
	var c agenticpm.Action
	s.MustRoute(t, 200, contract.CancelAction, "", &c, p.ID, gone.ID)
	assert.NotEmpty(t, c.CancelledAt, "cancelled: cancelledAt")
	assert.False(t, c.Executed, "cancelled: executed")
	apitest.WantError(t, s.Do(t, contract.CancelAction.Method, contract.CancelAction.URL(p.ID, gone.ID), ""), 409, "conflict", "", "cancelled")
	apitest.WantError(t, s.Do(t, contract.ReleaseAction.Method, contract.ReleaseAction.URL(p.ID, gone.ID), ""), 409, "conflict", "", "cancelled")
	apitest.WantError(t, s.Do(t, contract.ReleaseAction.Method, contract.ReleaseAction.URL(p.ID, plain.ID), ""), 409, "conflict", "", "not held")
	apitest.WantError(t, s.Do(t, contract.CancelAction.Method, contract.CancelAction.URL(p.ID, plain.ID), ""), 409, "conflict", "", "not held")

	// Refused requests change nothing.
	before := s.Items(t, s.Table)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{contract.ReleaseAction.URL(p.ID, "01ARZ3NDEKTSV4RRFFQ69G5FAV"), 404}, // a ULID no action has
		{contract.ReleaseAction.URL(p.ID, "not-a-ulid"), 404},                 // cannot name an action
		{contract.ReleaseAction.URL(missingID, due.ID), 404},                  // another project
		{contract.ReleaseAction.URL(p.ID, due.ID) + "?now=1", 400},
		{contract.CancelAction.URL(p.ID, due.ID) + "?x=1", 400},
		{contract.ListHeldActions.URL() + "?due=1", 400},
		{contract.ListHeldActions.URLQuery(svc.Values{svc.Limit: "0"}), 400},
		{contract.ListHeldActions.URLQuery(svc.Values{svc.Cursor: "abc"}), 400},
	} {
		method := "POST"
		if strings.HasPrefix(tc.path, contract.ListHeldActions.URL()) {
			method = "GET"
		}
		r := s.Do(t, method, tc.path, "")
		assert.Equal(t, tc.status, r.Status, "%s %s: %s", method, tc.path, r.Body)
	}
	assert.Len(t, s.Items(t, s.Table), len(before), "refused requests changed the item count")

	// Release now: not due yet, released all the same, event on the bus.
	var rel agenticpm.Released
	s.MustRoute(t, 200, contract.ReleaseAction, "", &rel, p.ID, soon.ID)
	assert.True(t, rel.Executed, "released: executed")
	assert.NotEmpty(t, rel.ExecutedAt, "released: executedAt")
	assert.Equal(t, agenticpm.ReleasedByAPI, rel.ReleasedBy, "released: by")
	assert.True(t, rel.Dispatched, "released: dispatched")
	apitest.WantError(t, s.Do(t, contract.ReleaseAction.Method, contract.ReleaseAction.URL(p.ID, soon.ID), ""), 409, "conflict", "", "released")
	d := s.details(t)
	if assert.Len(t, d, 1, "event details") {
		assert.Equal(t, "agenticpm/action/"+soon.ID, d[0].IdempotencyKey, "event: idempotency key")
		assert.Equal(t, soon.ID, d[0].Action.ID, "event: action")
		assert.True(t, d[0].Action.Executed, "event: executed")
		assert.Equal(t, "soon", d[0].Action.Description, "event: description")
	}

	// The job releases what is due, and only that.
	rep, err := s.job().RunOnce(context.Background())
	require.NoError(t, err, "run")
	assert.Equal(t, agenticpm.ReleaseReport{Due: 1, Released: 1, Sent: 1, Outbox: 0}, *rep, "run")
	assert.Equal(t, []string{"later"}, s.held(t), "held after the run")
	d = s.details(t)
	if assert.Len(t, d, 2, "event details") {
		assert.Equal(t, due.ID, d[1].Action.ID, "second event: action")
		assert.Equal(t, agenticpm.ReleasedBySchedule, d[1].Action.ReleasedBy, "second event: released by")
	}
	// Stored: executed, out of every queue, event id recorded.
	for _, a := range []agenticpm.Action{soon, due} {
		it := s.raw(t, "PROJECT#"+p.ID, "ACTION#"+a.CreatedAt+"#"+a.ID)
		assert.Equal(t, true, it["executed"], "stored %s: executed", a.Description)
		assert.Nil(t, it["GSI1PK"], "stored %s: GSI1PK", a.Description)
		assert.Nil(t, it["dispatchLease"], "stored %s: dispatchLease", a.Description)
		assert.NotNil(t, it["dispatchedAt"], "stored %s: dispatchedAt", a.Description)
		assert.NotNil(t, it["eventId"], "stored %s: eventId", a.Description)
	}
	proj, global := s.feedCount(t, p.ID)
	assert.Equal(t, 2, proj, "action_taken events in the project feed")
	assert.Equal(t, 2, global, "action_taken events in GLOBAL")
	// A second run finds nothing; the project listing shows every action.
	if rep, err := s.job().RunOnce(context.Background()); assert.NoError(t, err, "second run") {
		assert.Equal(t, 0, rep.Due, "second run: due")
		assert.Equal(t, 0, rep.Sent, "second run: sent")
	}
	acts, _ := all[agenticpm.Action](t, s.service, contract.ListActions.URL(p.ID)+"?")
	assert.Len(t, acts, 5, "project lists every action")
	// Later becomes due when the clock passes it.
	s.clock.Advance(3 * time.Hour)
	if rep, err := s.job().RunOnce(context.Background()); assert.NoError(t, err, "run after 3h") {
		assert.Equal(t, 1, rep.Released, "run after 3h: released")
	}
	assert.Len(t, s.details(t), 3, "events")
	_ = late
}

// TestReleaseRace: 20 concurrent releases of one due action, half by job
// runs and half by API calls: one release, one event, one action_taken
// event in each feed.
func TestReleaseRace(t *testing.T) {
	s := newHoldService(t, true)
	p := s.project(t, "")
	a := s.hold(t, p.ID, "race", s.clock.Now().Add(-time.Second))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		apiWins  int
		jobWins  int
		failures []string
	)
	start := make(chan struct{})
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if i%2 == 0 {
				rep, err := s.job().RunOnce(context.Background())
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failures = append(failures, err.Error())
				}
				jobWins += rep.Released
				return
			}
			r := s.Do(t, contract.ReleaseAction.Method, contract.ReleaseAction.URL(p.ID, a.ID), "")
			mu.Lock()
			defer mu.Unlock()
			switch r.Status {
			case http.StatusOK:
				apiWins++
			case http.StatusConflict:
			default:
				failures = append(failures, fmt.Sprintf("API %d %s", r.Status, r.Body))
			}
		}()
	}
	close(start)
	wg.Wait()
	require.Empty(t, failures, "failures")
	assert.Equal(t, 1, apiWins+jobWins, "releases (API %d, job %d)", apiWins, jobWins)
	d := s.details(t)
	if assert.Len(t, d, 1, "events on the bus") {
		assert.Equal(t, a.ID, d[0].Action.ID, "event: action")
	}
	proj, global := s.feedCount(t, p.ID)
	assert.Equal(t, 1, proj, "action_taken events in the project feed")
	assert.Equal(t, 1, global, "action_taken events in GLOBAL")
	// Later runs (lease long gone) send nothing more: the outbox is empty.
	s.clock.Advance(agenticpm.DispatchLease + time.Minute)
	if rep, err := s.job().RunOnce(context.Background()); assert.NoError(t, err, "later run") {
		assert.Equal(t, 0, rep.Sent, "later run: sent")
		assert.Equal(t, 0, rep.Outbox, "later run: outbox")
	}
	assert.Len(t, s.events.Events(), 1, "events after a later run")
}

// TestOutbox: a release whose PutEvents fails is released all the same;
// its event waits in the outbox under the releaser's lease and is sent by
// the first run after the lease, once.
func TestOutbox(t *testing.T) {
	s := newHoldService(t, true)
	p := s.project(t, "")
	a := s.hold(t, p.ID, "flaky", s.clock.Now().Add(time.Hour))
	s.events.FailEntries(1)
	var rel agenticpm.Released
	s.MustRoute(t, 200, contract.ReleaseAction, "", &rel, p.ID, a.ID)
	require.True(t, rel.Executed, "released: executed")
	require.False(t, rel.Dispatched, "released: dispatched")
	require.Empty(t, s.events.Events(), "the failed entry was accepted")
	// Within the lease, runs leave it to the releaser.
	if rep, err := s.job().RunOnce(context.Background()); assert.NoError(t, err, "run within the lease") {
		assert.Equal(t, 0, rep.Outbox, "run within the lease: outbox")
		assert.Equal(t, 0, rep.Sent, "run within the lease: sent")
	}
	s.clock.Advance(agenticpm.DispatchLease + time.Second)
	var wg sync.WaitGroup
	for range 5 { // overlapping runs: one takes the lease
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.job().RunOnce(context.Background())
			assert.NoError(t, err, "overlapping run")
		}()
	}
	wg.Wait()
	d := s.details(t)
	require.Len(t, d, 1, "events: the outbox entry once")
	require.Equal(t, a.ID, d[0].Action.ID, "event: action")
	require.Equal(t, "agenticpm/action/"+a.ID, d[0].IdempotencyKey, "event: idempotency key")
	if rep, err := s.job().RunOnce(context.Background()); assert.NoError(t, err, "run after sending") {
		assert.Equal(t, 0, rep.Outbox, "run after sending: outbox")
	}
}

// Without a bus the release still happens; the event waits in the outbox
// (here for good), and the job says so.
func TestReleaseWithoutBus(t *testing.T) {
	s := newHoldService(t, false)
	p := s.project(t, "")
	a := s.hold(t, p.ID, "no bus", s.clock.Now().Add(-time.Second))
	var rel agenticpm.Released
	s.MustRoute(t, 200, contract.ReleaseAction, "", &rel, p.ID, a.ID)
	assert.True(t, rel.Executed, "released: executed")
	assert.False(t, rel.Dispatched, "released: dispatched")
	s.clock.Advance(agenticpm.DispatchLease + time.Second)
	err := s.job().Run(context.Background(), fn.ScheduleEvent{ScheduledTime: s.clock.Now()})
	assert.ErrorContains(t, err, contract.EnvEventBus, "run without a bus")
}

// An action can be larger than EventBridge takes (256 KB per call): its
// event goes without detail and confidence, marked trimmed, and the other
// releases of the run are sent with it.
func TestReleaseOfALargeAction(t *testing.T) {
	s := newHoldService(t, true)
	p := s.project(t, "")
	until := s.clock.Now().Add(agenticpm.MinHold + time.Second).Format(time.RFC3339Nano)
	big := fmt.Sprintf(`{"actionType":"email_sent","description":"big","detail":{"body":%q},"heldUntil":%q}`, strings.Repeat("x", 300<<10), until)
	s.MustRoute(t, 201, contract.RecordAction, big, nil, p.ID)
	small := s.hold(t, p.ID, "small", s.clock.Now().Add(agenticpm.MinHold+time.Second))
	s.clock.Advance(agenticpm.MinHold + 2*time.Second)
	rep, err := s.job().RunOnce(context.Background())
	require.NoError(t, err, "run")
	require.Equal(t, 2, rep.Sent, "run: sent")
	byDesc := map[string]agenticpm.EventDetail{}
	for _, d := range s.details(t) {
		byDesc[d.Action.Description] = d
	}
	bigEvent := byDesc["big"]
	assert.True(t, bigEvent.Trimmed, "big: trimmed")
	assert.Nil(t, bigEvent.Action.Detail, "big: detail")
	assert.True(t, bigEvent.Action.Executed, "big: executed")
	assert.False(t, byDesc["small"].Trimmed, "small: trimmed")
	assert.Equal(t, small.ID, byDesc["small"].Action.ID, "small: action")
}

// A run emits Releases and OverdueHeldActions (EMF, in the release job's
// log): an action held past contract.OverdueGraceMinutes (a job stopped
// that long) is overdue at the run that finds it; one just due is not.
func TestReleaseRunMetrics(t *testing.T) {
	s := newHoldService(t, true)
	p := s.project(t, "")
	now := s.clock.Now()
	s.hold(t, p.ID, "late", now.Add(-(contract.OverdueGraceMinutes+1)*time.Minute))
	s.hold(t, p.ID, "just due", now.Add(-time.Second))
	s.hold(t, p.ID, "later", now.Add(time.Hour))
	var logs bytes.Buffer
	cfg := s.cfg
	cfg.Client = s.jobClient
	cfg.Logger = logx.New(&logs, slog.LevelInfo).With(svc.MetricDimension, contract.Release.Name)
	require.NoError(t, agenticpm.NewReleaseJobFromConfig(cfg).Run(context.Background(), fn.ScheduleEvent{ScheduledTime: now}))
	ms, err := metrics.ParseLines(logs.Bytes())
	require.NoError(t, err, "EMF lines")
	fnDim := map[string]string{svc.MetricDimension: contract.Release.Name}
	for _, tc := range []struct {
		metric svc.Metric
		want   float64
	}{{contract.Releases, 2}, {contract.OverdueHeldActions, 1}} {
		got := metrics.Find(ms, tc.metric.Name, fnDim)
		require.Len(t, got, 1, "%s: one measurement per run", tc.metric.Name)
		assert.Equal(t, tc.want, metrics.Sum(got), tc.metric.Name)
	}
	assert.Len(t, metrics.Find(ms, contract.EscalationsClosed.Name, map[string]string{svc.MetricDimension: contract.Release.Name, contract.DimOutcome: contract.OutcomeExpired}), 1, "expired escalations: one measurement per run")
}
