package agenticpm_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/agenticpmapi"
)

// feed counts the events of eventType about a project, in its feed and in
// GLOBAL.
func (s *service) feed(t *testing.T, projectID, eventType string) (project, global int) {
	t.Helper()
	pe, _ := all[agenticpm.Event](t, s, "/projects/"+projectID+"/events?")
	ge, _ := all[agenticpm.Event](t, s, "/events?")
	for _, e := range pe {
		if e.EventType == eventType {
			project++
		}
	}
	for _, e := range ge {
		if e.EventType == eventType && e.ProjectID == projectID {
			global++
		}
	}
	return project, global
}

// wantFeed checks that the project's feed and GLOBAL each hold n events
// of eventType about it.
func (s *service) wantFeed(t *testing.T, projectID, eventType string, n int) {
	t.Helper()
	project, global := s.feed(t, projectID, eventType)
	assert.Equal(t, n, project, "%s in the project feed", eventType)
	assert.Equal(t, n, global, "%s in GLOBAL", eventType)
}

// raidItem is a RAID log entry its schema accepts.
const raidItem = `{"id":"R001","severity":"high","status":"open","title":"Vendor EOL","type":"risk"}`

func escalationWithDeadline(expiresAt time.Time) string {
	return `{"title":"Delay beta?","context":{},"options":[{"option":"Delay"}],"expiresAt":"` + expiresAt.Format(time.RFC3339Nano) + `"}`
}

// An escalation: readable one by one, created with its deadline (given,
// else the configured escalation_expiry_hours) and its escalation_created
// event in both feeds; a decision writes escalation_decided with it.
func TestEscalationLifecycle(t *testing.T) {
	clock := apitest.NewClock(time.Now().UTC(), time.Millisecond)
	s := newService(t, clock.Now)
	p := s.project(t, "")
	r := s.Do(t, "POST", "/projects/"+p.ID+"/escalations", escalationBody)
	var e agenticpm.Escalation
	r.JSON(t, &e)
	require.Equal(t, 201, r.Status, "create: %s", r.Body)
	require.Equal(t, "projects/"+p.ID+"/escalations/"+e.ID, r.Header.Get("Location"), "create: Location")
	created, _ := time.Parse(time.RFC3339Nano, e.CreatedAt)
	exp, _ := time.Parse(time.RFC3339Nano, e.ExpiresAt)
	assert.Equal(t, 72*time.Hour, exp.Sub(created), "expiresAt %s for createdAt %s: want the default 72 hours later", e.ExpiresAt, e.CreatedAt)
	var got agenticpm.Escalation
	s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations/"+e.ID, "", &got)
	assert.Equal(t, e.ID, got.ID, "get: id")
	assert.Equal(t, e.ExpiresAt, got.ExpiresAt, "get: expiresAt")
	assert.Equal(t, agenticpm.EscalationPending, got.Status, "get: status")
	assert.Len(t, got.Options, len(e.Options), "get: options")
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationCreated, 1)

	// The stored override of the deadline, and an explicit one.
	s.Must(t, 200, "PUT", "/agent/config/escalation_expiry_hours", `{"value":2}`, nil)
	var short agenticpm.Escalation
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationBody, &short)
	c, _ := time.Parse(time.RFC3339Nano, short.CreatedAt)
	exp, _ = time.Parse(time.RFC3339Nano, short.ExpiresAt)
	assert.Equal(t, 2*time.Hour, exp.Sub(c), "expiresAt %s for createdAt %s: want the stored 2 hours later", short.ExpiresAt, short.CreatedAt)
	at := clock.Now().Add(5 * time.Hour).Truncate(time.Second)
	var given agenticpm.Escalation
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(at), &given)
	assert.Equal(t, agenticpm.Timestamp(at), given.ExpiresAt, "expiresAt given")

	var d agenticpm.Escalation
	s.Must(t, 200, "POST", "/projects/"+p.ID+"/escalations/"+e.ID+"/decision", `{"userDecision":"Delay"}`, &d)
	assert.Equal(t, agenticpm.EscalationDecided, d.Status, "decided: status")
	assert.Equal(t, e.ExpiresAt, d.ExpiresAt, "decided: expiresAt")
	assert.Equal(t, e.Title, d.Title, "decided: title")
	s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations/"+e.ID, "", &got)
	assert.Equal(t, agenticpm.EscalationDecided, got.Status, "stored after the decision: status")
	assert.Equal(t, "Delay", got.UserDecision, "stored after the decision: decision")
	assert.Equal(t, d.DecidedAt, got.DecidedAt, "stored after the decision: decidedAt")
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationDecided, 1)

	before := s.Count(t)
	base := "/projects/" + p.ID + "/escalations"
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, field, msg         string
	}{
		{"get unknown", "GET", base + "/3f1d7e3a-9999-4000-8000-000000000000", "", 404, "not_found", "", "escalation"},
		{"get under unknown project", "GET", "/projects/" + missingID + "/escalations/" + e.ID, "", 404, "not_found", "", "project"},
		{"get malformed", "GET", base + "/x", "", 404, "not_found", "", "escalation"},
		{"deadline in the past", "POST", base, escalationWithDeadline(clock.Now().Add(-time.Minute)), 400, "validation_failed", "expiresAt", "future"},
		{"deadline a second ahead", "POST", base, escalationWithDeadline(clock.Now().Add(time.Second)), 400, "validation_failed", "expiresAt", "at least 5 minutes"},
		{"deadline beyond a year", "POST", base, escalationWithDeadline(clock.Now().Add(400 * 24 * time.Hour)), 400, "validation_failed", "expiresAt", ""},
		{"deadline not a time", "POST", base, `{"title":"t","context":{},"options":[{}],"expiresAt":"tomorrow"}`, 400, "validation_failed", "expiresAt", ""},
		{"expiry setting not a number", "PUT", "/agent/config/escalation_expiry_hours", `{"value":"soon"}`, 400, "validation_failed", "value", "number"},
		{"expiry setting zero", "PUT", "/agent/config/escalation_expiry_hours", `{"value":0}`, 400, "validation_failed", "value", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, tt.method, tt.path, tt.body), tt.status, tt.code, tt.field, tt.msg)
		})
	}
	assert.Equal(t, before, s.Count(t), "items: a refused request wrote")
}

// The job expires escalations past their deadline, and only those: status
// and GSI1 entry move together, with escalation_expired in both feeds; a
// decision or supersede after the deadline is refused even before the job
// ran.
func TestEscalationExpiry(t *testing.T) {
	s := newHoldService(t, true)
	p := s.project(t, "")
	now := s.clock.Now()
	var soon, later agenticpm.Escalation
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(now.Add(agenticpm.MinEscalationExpiry+time.Second)), &soon)
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(now.Add(time.Hour)), &later)

	rep, err := s.job().ExpireOnce(context.Background())
	require.NoError(t, err, "before the deadline")
	require.Equal(t, 0, rep.Overdue, "before the deadline: overdue")
	require.Equal(t, 0, rep.Expired, "before the deadline: expired")
	s.clock.Advance(agenticpm.MinEscalationExpiry + time.Minute)
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+p.ID+"/escalations/"+soon.ID+"/decision", `{"userDecision":"late"}`), 409, "conflict", "", "deadline")
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+p.ID+"/escalations/"+soon.ID+"/supersede", escalationBody), 409, "conflict", "", "deadline")

	// A whole run, as Lambda invokes it: release half and expiry half.
	require.NoError(t, s.job().Run(context.Background(), fn.ScheduleEvent{ScheduledTime: s.clock.Now()}), "a whole run")
	var got agenticpm.Escalation
	s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations/"+soon.ID, "", &got)
	assert.Equal(t, agenticpm.EscalationExpired, got.Status, "after the run: status")
	assert.NotEmpty(t, got.ExpiredAt, "after the run: expiredAt")
	assert.Empty(t, got.UserDecision, "after the run: decision")
	assert.Equal(t, "ESCALATION#expired", s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+soon.ID)["GSI1PK"], "GSI1PK: the pending view would keep listing it")
	pending, _ := all[agenticpm.Escalation](t, s.service, "/escalations?status=pending")
	assert.Equal(t, []string{later.ID}, escalationIDs(pending), "pending")
	expired, _ := all[agenticpm.Escalation](t, s.service, "/escalations?status=expired")
	assert.Equal(t, []string{soon.ID}, escalationIDs(expired), "expired")
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationExpired, 1)
	rep, err = s.job().ExpireOnce(context.Background())
	if assert.NoError(t, err, "a second run") {
		assert.Equal(t, 0, rep.Expired, "a second run: expired")
	}
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+p.ID+"/escalations/"+soon.ID+"/decision", `{"userDecision":"late"}`), 409, "conflict", "", "expired")
}

// Twenty concurrent changes of one escalation, each race: exactly one
// change, one event of it in each feed.
func TestEscalationRaces(t *testing.T) {
	s := newHoldService(t, true)
	p := s.project(t, "")

	t.Run("expiry: 20 job runs", func(t *testing.T) {
		var e agenticpm.Escalation
		s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(s.clock.Now().Add(agenticpm.MinEscalationExpiry+time.Second)), &e)
		s.clock.Advance(agenticpm.MinEscalationExpiry + time.Minute)
		var wg sync.WaitGroup
		var mu sync.Mutex
		expired := 0
		for range 20 {
			wg.Go(func() {
				rep, err := s.job().ExpireOnce(context.Background())
				if !assert.NoError(t, err, "expiry run") {
					return
				}
				mu.Lock()
				expired += rep.Expired
				mu.Unlock()
			})
		}
		wg.Wait()
		assert.Equal(t, 1, expired, "expiries of one escalation")
		s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationExpired, 1)
	})

	t.Run("supersede: 20 requests", func(t *testing.T) {
		var e agenticpm.Escalation
		s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationBody, &e)
		createdBefore, _ := s.feed(t, p.ID, agenticpm.EventTypeEscalationCreated)
		answers := make([]apitest.Response, 20)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() {
				answers[i] = s.Do(t, "POST", "/projects/"+p.ID+"/escalations/"+e.ID+"/supersede", fmt.Sprintf(`{"title":"Replacement %d","context":{},"options":[{"option":"a"}]}`, i))
			})
		}
		wg.Wait()
		var winner agenticpm.Escalation
		for _, r := range answers {
			switch r.Status {
			case 201:
				assert.Empty(t, winner.ID, "a second 201: %s", r.Body)
				r.JSON(t, &winner)
			case 409:
			default:
				assert.Failf(t, "supersede", "%d %s", r.Status, r.Body)
			}
		}
		var old agenticpm.Escalation
		s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations/"+e.ID, "", &old)
		require.NotEmpty(t, winner.ID, "no supersede won")
		require.Equal(t, agenticpm.EscalationSuperseded, old.Status, "old: status")
		require.Equal(t, winner.ID, old.SupersededBy, "old: supersededBy")
		require.Equal(t, e.ID, winner.Supersedes, "winner: supersedes")
		mine, _ := all[agenticpm.Escalation](t, s.service, "/projects/"+p.ID+"/escalations?")
		replacements := 0
		for _, x := range mine {
			if x.Supersedes == e.ID {
				replacements++
			}
		}
		assert.Equal(t, 1, replacements, "escalations superseding %s", e.ID)
		n, _ := s.feed(t, p.ID, agenticpm.EventTypeEscalationCreated)
		assert.Equal(t, createdBefore+1, n, "escalation_created events: want one more")
		assert.Equal(t, "ESCALATION#superseded", s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+e.ID)["GSI1PK"], "GSI1PK of the superseded one")
	})

	t.Run("decide, supersede and expire: 20 at once", func(t *testing.T) {
		var e agenticpm.Escalation
		s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(s.clock.Now().Add(time.Hour)), &e)
		statuses := make([]int, 20)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() {
				base := "/projects/" + p.ID + "/escalations/" + e.ID
				if i%2 == 0 {
					statuses[i] = s.Do(t, "POST", base+"/decision", `{"userDecision":"d"}`).Status
				} else {
					statuses[i] = s.Do(t, "POST", base+"/supersede", escalationBody).Status
				}
			})
		}
		wg.Wait()
		wins := 0
		for _, c := range statuses {
			switch c {
			case 200, 201:
				wins++
			case 409:
			default:
				assert.Failf(t, "unexpected status", "status %d", c)
			}
		}
		assert.Equal(t, 1, wins, "%v: changes of one escalation", statuses)
	})
}

// Supersede: the new escalation names the old one, which moves to
// superseded; a decided one cannot be superseded; an Idempotency-Key
// replays the first answer and creates nothing more.
func TestSupersede(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	e := s.escalation(t, p.ID)
	path := "/projects/" + p.ID + "/escalations/" + e.ID + "/supersede"
	body := `{"title":"Delay beta by a month?","context":{"risk":"vendor EOL"},"options":[{"option":"Delay a month"}]}`
	first := s.Do(t, "POST", path, body, api.IdempotencyHeader, "sup-1")
	again := s.Do(t, "POST", path, body, api.IdempotencyHeader, "sup-1")
	require.Equal(t, 201, first.Status, "first: %s", first.Body)
	require.Equal(t, 201, again.Status, "again: %s", again.Body)
	require.Equal(t, string(first.Body), string(again.Body), "the replayed answer")
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"), "again: Idempotent-Replayed")
	var n agenticpm.Escalation
	first.JSON(t, &n)
	assert.Equal(t, e.ID, n.Supersedes, "new: supersedes")
	assert.Equal(t, agenticpm.EscalationPending, n.Status, "new: status")
	assert.Equal(t, "Delay beta by a month?", n.Title, "new: title")
	assert.NotEqual(t, e.ID, n.ID, "new: id")
	var old agenticpm.Escalation
	s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations/"+e.ID, "", &old)
	assert.Equal(t, agenticpm.EscalationSuperseded, old.Status, "old: status")
	assert.Equal(t, n.ID, old.SupersededBy, "old: supersededBy")
	assert.NotEmpty(t, old.SupersededAt, "old: supersededAt")
	before := s.Count(t)
	apitest.WantError(t, s.Do(t, "POST", path, body), 409, "conflict", "", "superseded")
	assert.Equal(t, before, s.Count(t), "items: a refused supersede wrote")
	s.Must(t, 200, "POST", "/projects/"+p.ID+"/escalations/"+n.ID+"/decision", `{"userDecision":"ok"}`, nil)
	before = s.Count(t)
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+p.ID+"/escalations/"+n.ID+"/supersede", body), 409, "conflict", "", "decided")
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+missingID+"/escalations/"+n.ID+"/supersede", body), 404, "not_found", "", "project")
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+p.ID+"/escalations/3f1d7e3a-9999-4000-8000-000000000000/supersede", body), 404, "not_found", "", "escalation")
	apitest.WantError(t, s.Do(t, "POST", path, `{"title":"no options","context":{}}`), 400, "validation_failed", "options", "")
	assert.Equal(t, before, s.Count(t), "items: a refused supersede wrote")
}

// Held without a time: held for hold_queue_minutes (the stored override,
// else 30); a setting that is no usable number is refused when stored.
func TestHeldDefault(t *testing.T) {
	clock := apitest.NewClock(time.Now().UTC(), time.Millisecond)
	s := newService(t, clock.Now)
	p := s.project(t, "")
	path := "/projects/" + p.ID + "/actions"
	minutes := func(a agenticpm.Action) float64 {
		c, _ := time.Parse(time.RFC3339Nano, a.CreatedAt)
		h, err := time.Parse(time.RFC3339Nano, a.HeldUntil)
		require.NoError(t, err, "heldUntil %q", a.HeldUntil)
		return h.Sub(c).Minutes()
	}
	var a agenticpm.Action
	s.Must(t, 201, "POST", path, `{"actionType":"email_sent","description":"status","held":true}`, &a)
	assert.Equal(t, 30.0, minutes(a), "minutes held by default")
	assert.Equal(t, "HOLD#pending", s.raw(t, "PROJECT#"+p.ID, "ACTION#"+a.CreatedAt+"#"+a.ID)["GSI1PK"], "GSI1PK: not in the hold queue")
	s.Must(t, 200, "PUT", "/agent/config/hold_queue_minutes", `{"value":45}`, nil)
	s.Must(t, 201, "POST", path, `{"actionType":"email_sent","description":"status","held":true}`, &a)
	assert.Equal(t, 45.0, minutes(a), "minutes held with the setting at 45")
	var free agenticpm.Action
	s.Must(t, 201, "POST", path, `{"actionType":"email_sent","description":"status","held":false}`, &free)
	assert.Empty(t, free.HeldUntil, "held:false held until")
	before := s.Count(t)
	apitest.WantError(t, s.Do(t, "POST", path, `{"actionType":"x","description":"d","held":false,"heldUntil":"2030-01-01T00:00:00Z"}`), 400, "validation_failed", "held", "")
	apitest.WantError(t, s.Do(t, "POST", path, `{"actionType":"x","description":"d","held":null}`), 400, "validation_failed", "held", "")
	apitest.WantError(t, s.Do(t, "PUT", "/agent/config/hold_queue_minutes", `{"value":"half an hour"}`), 400, "validation_failed", "value", "number")
	apitest.WantError(t, s.Do(t, "PUT", "/agent/config/hold_queue_minutes", `{"value":100000}`), 400, "validation_failed", "value", "")
	assert.Equal(t, before, s.Count(t), "items: a refused request wrote")
	// A value stored before the check (an older item) falls back to the
	// default rather than failing every held action.
	s.putRaw(t, map[string]any{"PK": "AGENT", "SK": "CONFIG#hold_queue_minutes", "key": "hold_queue_minutes", "value": "soon", "updatedAt": "2026-01-01T00:00:00.000000Z"})
	s.Must(t, 201, "POST", path, `{"actionType":"email_sent","description":"status","held":true}`, &a)
	assert.Equal(t, 30.0, minutes(a), "minutes held with an unusable setting: the default")
}

// An action recorded without a hold is marked executed once; held,
// cancelled and executed ones are refused; a lost answer is not a 409.
func TestMarkExecuted(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	base := "/projects/" + p.ID + "/actions/"
	var plain, held agenticpm.Action
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/actions", `{"actionType":"jira_update","description":"comment on MCU-1"}`, &plain)
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/actions", `{"actionType":"email_sent","description":"held","held":true}`, &held)

	var done agenticpm.Action
	s.Must(t, 200, "POST", base+plain.ID+"/executed", "", &done)
	assert.True(t, done.Executed, "executed")
	assert.NotEmpty(t, done.ExecutedAt, "executed: executedAt")
	assert.Equal(t, plain.ID, done.ID, "executed: id")
	assert.Empty(t, done.HeldUntil, "executed: heldUntil")
	apitest.WantError(t, s.Do(t, "POST", base+plain.ID+"/executed", ""), 409, "conflict", "", "is executed")
	apitest.WantError(t, s.Do(t, "POST", base+held.ID+"/executed", ""), 409, "conflict", "", "release it instead")
	s.Must(t, 200, "POST", base+held.ID+"/cancel", "", nil)
	apitest.WantError(t, s.Do(t, "POST", base+held.ID+"/executed", ""), 409, "conflict", "", "cancelled")
	apitest.WantError(t, s.Do(t, "POST", base+"01ARZ3NDEKTSV4RRFFQ69G5FAV/executed", ""), 404, "not_found", "", "action")
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+missingID+"/actions/"+plain.ID+"/executed", ""), 404, "not_found", "", "")

	// Twenty at once: one 200.
	var again agenticpm.Action
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/actions", `{"actionType":"jira_update","description":"again"}`, &again)
	codes := make([]int, 20)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() { codes[i] = s.Do(t, "POST", base+again.ID+"/executed", "").Status })
	}
	wg.Wait()
	assert.Equal(t, 1, strings.Count(fmt.Sprint(codes), "200"), "%v: markings", codes)

	// The answer lost after DynamoDB applied it: the SDK's retry finds
	// its own token and answers 200.
	client, proxy := servicetest.FaultyClient(t, "agenticpm")
	cfg := s.cfg
	cfg.Client = client
	lossy := s.Service
	lossy.H = agenticpmapi.NewHandler(cfg)
	var lost agenticpm.Action
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/actions", `{"actionType":"jira_update","description":"lost"}`, &lost)
	proxy.NextOn("UpdateItem", ddbfault.DropAnswer, 1)
	lossy.Must(t, 200, "POST", base+lost.ID+"/executed", "", &done)
	assert.True(t, done.Executed, "after a lost answer %+v", done)
}

// Status changes and creates whose answer DynamoDB lost after applying
// them: the SDK sends the same transaction again (same client request
// token) and the client sees success, with one change and one event.
func TestLifecycleWritesWithLostAnswers(t *testing.T) {
	s := newHoldService(t, true)
	p := s.project(t, "")
	client, proxy := servicetest.FaultyClient(t, "agenticpm")
	cfg := s.cfg
	cfg.Client = client
	lossy := s.Service
	lossy.H = agenticpmapi.NewHandler(cfg)

	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	var e agenticpm.Escalation
	lossy.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationBody, &e)
	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	var n agenticpm.Escalation
	lossy.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations/"+e.ID+"/supersede", escalationBody, &n)
	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	lossy.Must(t, 200, "POST", "/projects/"+p.ID+"/escalations/"+n.ID+"/decision", `{"userDecision":"ok"}`, nil)
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationCreated, 2)
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationDecided, 1)

	// The job's expiry with its answer lost.
	var x agenticpm.Escalation
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(s.clock.Now().Add(agenticpm.MinEscalationExpiry+time.Second)), &x)
	s.clock.Advance(agenticpm.MinEscalationExpiry + time.Minute)
	jcfg := s.cfg
	jcfg.Client = client
	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	rep, err := agenticpm.NewReleaseJobFromConfig(jcfg).ExpireOnce(context.Background())
	if assert.NoError(t, err, "expiry with a lost answer") {
		assert.Equal(t, 1, rep.Expired, "expiry with a lost answer")
	}
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationExpired, 1)

	// An undo with its answer lost.
	path := "/projects/" + p.ID + "/artefacts/raid_log"
	s.Must(t, 201, "PUT", path, `{"content":{"items":[]}}`, nil)
	s.Must(t, 200, "PUT", path, `{"content":{"items":[`+raidItem+`]},"expectedVersion":1}`, nil)
	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	var u agenticpm.Artefact
	r := lossy.Do(t, "POST", path+"/undo", "", "If-Match", `"2"`)
	require.Equal(t, 200, r.Status, "undo with a lost answer: %s", r.Body)
	r.JSON(t, &u)
	assert.Equal(t, 3, u.Version, "undo with a lost answer: version")
	assert.Equal(t, `{"items":[]}`, string(u.Content), "undo with a lost answer: content")
	assert.Equal(t, 5, proxy.Faults(), "faults injected")
}
