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

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// feed counts the events of eventType about a project, in its feed and in
// GLOBAL.
func (s *service) feed(t *testing.T, projectID, eventType string) (project, global int) {
	t.Helper()
	pe, _ := all[agenticpm.Event](t, s, contract.ListProjectEvents.URL(projectID)+"?")
	ge, _ := all[agenticpm.Event](t, s, contract.ListEvents.URL()+"?")
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
	r := s.Do(t, contract.CreateEscalation.Method, contract.CreateEscalation.URL(p.ID), escalationBody)
	var e agenticpm.Escalation
	r.JSON(t, &e)
	require.Equal(t, 201, r.Status, "create: %s", r.Body)
	require.Equal(t, strings.TrimPrefix(contract.GetEscalation.URL(p.ID, e.ID), "/"), r.Header.Get("Location"), "create: Location")
	created, _ := time.Parse(time.RFC3339Nano, e.CreatedAt)
	exp, _ := time.Parse(time.RFC3339Nano, e.ExpiresAt)
	assert.Equal(t, 72*time.Hour, exp.Sub(created), "expiresAt %s for createdAt %s: want the default 72 hours later", e.ExpiresAt, e.CreatedAt)
	var got agenticpm.Escalation
	s.MustRoute(t, 200, contract.GetEscalation, "", &got, p.ID, e.ID)
	assert.Equal(t, e.ID, got.ID, "get: id")
	assert.Equal(t, e.ExpiresAt, got.ExpiresAt, "get: expiresAt")
	assert.Equal(t, agenticpm.EscalationPending, got.Status, "get: status")
	assert.Len(t, got.Options, len(e.Options), "get: options")
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationCreated, 1)

	// The stored override of the deadline, and an explicit one.
	s.MustRoute(t, 200, contract.PutAgentConfig, `{"value":2}`, nil, "escalation_expiry_hours")
	var short agenticpm.Escalation
	s.MustRoute(t, 201, contract.CreateEscalation, escalationBody, &short, p.ID)
	c, _ := time.Parse(time.RFC3339Nano, short.CreatedAt)
	exp, _ = time.Parse(time.RFC3339Nano, short.ExpiresAt)
	assert.Equal(t, 2*time.Hour, exp.Sub(c), "expiresAt %s for createdAt %s: want the stored 2 hours later", short.ExpiresAt, short.CreatedAt)
	at := clock.Now().Add(5 * time.Hour).Truncate(time.Second)
	var given agenticpm.Escalation
	s.MustRoute(t, 201, contract.CreateEscalation, escalationWithDeadline(at), &given, p.ID)
	assert.Equal(t, agenticpm.Timestamp(at), given.ExpiresAt, "expiresAt given")

	var d agenticpm.Escalation
	s.MustRoute(t, 200, contract.Decide, `{"userDecision":"Delay"}`, &d, p.ID, e.ID)
	assert.Equal(t, agenticpm.EscalationDecided, d.Status, "decided: status")
	assert.Equal(t, e.ExpiresAt, d.ExpiresAt, "decided: expiresAt")
	assert.Equal(t, e.Title, d.Title, "decided: title")
	s.MustRoute(t, 200, contract.GetEscalation, "", &got, p.ID, e.ID)
	assert.Equal(t, agenticpm.EscalationDecided, got.Status, "stored after the decision: status")
	assert.Equal(t, "Delay", got.UserDecision, "stored after the decision: decision")
	assert.Equal(t, d.DecidedAt, got.DecidedAt, "stored after the decision: decidedAt")
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationDecided, 1)

	before := s.Count(t)
	base := contract.ListProjectEscalations.URL(p.ID)
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, field, msg         string
	}{
		{"get unknown", contract.GetEscalation.Method, contract.GetEscalation.URL(p.ID, "3f1d7e3a-9999-4000-8000-000000000000"), "", 404, "not_found", "", "escalation"},
		{"get under unknown project", contract.GetEscalation.Method, contract.GetEscalation.URL(missingID, e.ID), "", 404, "not_found", "", "project"},
		{"get malformed", contract.GetEscalation.Method, contract.GetEscalation.URL(p.ID, "x"), "", 404, "not_found", "", "escalation"},
		{"deadline in the past", "POST", base, escalationWithDeadline(clock.Now().Add(-time.Minute)), 400, "validation_failed", "expiresAt", "future"},
		{"deadline a second ahead", "POST", base, escalationWithDeadline(clock.Now().Add(time.Second)), 400, "validation_failed", "expiresAt", "at least 5 minutes"},
		{"deadline beyond a year", "POST", base, escalationWithDeadline(clock.Now().Add(400 * 24 * time.Hour)), 400, "validation_failed", "expiresAt", ""},
		{"deadline not a time", "POST", base, `{"title":"t","context":{},"options":[{}],"expiresAt":"tomorrow"}`, 400, "validation_failed", "expiresAt", ""},
		{"expiry setting not a number", contract.PutAgentConfig.Method, contract.PutAgentConfig.URL("escalation_expiry_hours"), `{"value":"soon"}`, 400, "validation_failed", "value", "number"},
		{"expiry setting zero", contract.PutAgentConfig.Method, contract.PutAgentConfig.URL("escalation_expiry_hours"), `{"value":0}`, 400, "validation_failed", "value", ""},
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
	s.MustRoute(t, 201, contract.CreateEscalation, escalationWithDeadline(now.Add(agenticpm.MinEscalationExpiry+time.Second)), &soon, p.ID)
	s.MustRoute(t, 201, contract.CreateEscalation, escalationWithDeadline(now.Add(time.Hour)), &later, p.ID)

	rep, err := s.job().ExpireOnce(context.Background())
	require.NoError(t, err, "before the deadline")
	require.Equal(t, 0, rep.Overdue, "before the deadline: overdue")
	require.Equal(t, 0, rep.Expired, "before the deadline: expired")
	s.clock.Advance(agenticpm.MinEscalationExpiry + time.Minute)
	apitest.WantError(t, s.Do(t, contract.Decide.Method, contract.Decide.URL(p.ID, soon.ID), `{"userDecision":"late"}`), 409, "conflict", "", "deadline")
	apitest.WantError(t, s.Do(t, contract.SupersedeEscalation.Method, contract.SupersedeEscalation.URL(p.ID, soon.ID), escalationBody), 409, "conflict", "", "deadline")

	// A whole run, as Lambda invokes it: release half and expiry half.
	require.NoError(t, s.job().Run(context.Background(), fn.ScheduleEvent{ScheduledTime: s.clock.Now()}), "a whole run")
	var got agenticpm.Escalation
	s.MustRoute(t, 200, contract.GetEscalation, "", &got, p.ID, soon.ID)
	assert.Equal(t, agenticpm.EscalationExpired, got.Status, "after the run: status")
	assert.NotEmpty(t, got.ExpiredAt, "after the run: expiredAt")
	assert.Empty(t, got.UserDecision, "after the run: decision")
	assert.Equal(t, "ESCALATION#expired", s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+soon.ID)["GSI1PK"], "GSI1PK: the pending view would keep listing it")
	pending, _ := all[agenticpm.Escalation](t, s.service, contract.ListEscalations.URLQuery(svc.Values{contract.ParamStatus: "pending"}))
	assert.Equal(t, []string{later.ID}, escalationIDs(pending), "pending")
	expired, _ := all[agenticpm.Escalation](t, s.service, contract.ListEscalations.URLQuery(svc.Values{contract.ParamStatus: "expired"}))
	assert.Equal(t, []string{soon.ID}, escalationIDs(expired), "expired")
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationExpired, 1)
	rep, err = s.job().ExpireOnce(context.Background())
	if assert.NoError(t, err, "a second run") {
		assert.Equal(t, 0, rep.Expired, "a second run: expired")
	}
	apitest.WantError(t, s.Do(t, contract.Decide.Method, contract.Decide.URL(p.ID, soon.ID), `{"userDecision":"late"}`), 409, "conflict", "", "expired")
}

// Twenty concurrent changes of one escalation, each race: exactly one
// change, one event of it in each feed.
func TestEscalationRaces(t *testing.T) {
	s := newHoldService(t, true)
	p := s.project(t, "")

	t.Run("expiry: 20 job runs", func(t *testing.T) {
		var e agenticpm.Escalation
		s.MustRoute(t, 201, contract.CreateEscalation, escalationWithDeadline(s.clock.Now().Add(agenticpm.MinEscalationExpiry+time.Second)), &e, p.ID)
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
		s.MustRoute(t, 201, contract.CreateEscalation, escalationBody, &e, p.ID)
		createdBefore, _ := s.feed(t, p.ID, agenticpm.EventTypeEscalationCreated)
		answers := make([]apitest.Response, 20)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() {
				answers[i] = s.Do(t, contract.SupersedeEscalation.Method, contract.SupersedeEscalation.URL(p.ID, e.ID), fmt.Sprintf(`{"title":"Replacement %d","context":{},"options":[{"option":"a"}]}`, i))
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
		s.MustRoute(t, 200, contract.GetEscalation, "", &old, p.ID, e.ID)
		require.NotEmpty(t, winner.ID, "no supersede won")
		require.Equal(t, agenticpm.EscalationSuperseded, old.Status, "old: status")
		require.Equal(t, winner.ID, old.SupersededBy, "old: supersededBy")
		require.Equal(t, e.ID, winner.Supersedes, "winner: supersedes")
		mine, _ := all[agenticpm.Escalation](t, s.service, contract.ListProjectEscalations.URL(p.ID)+"?")
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
		s.MustRoute(t, 201, contract.CreateEscalation, escalationWithDeadline(s.clock.Now().Add(time.Hour)), &e, p.ID)
		statuses := make([]int, 20)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() {
				if i%2 == 0 {
					statuses[i] = s.Do(t, contract.Decide.Method, contract.Decide.URL(p.ID, e.ID), `{"userDecision":"d"}`).Status
				} else {
					statuses[i] = s.Do(t, contract.SupersedeEscalation.Method, contract.SupersedeEscalation.URL(p.ID, e.ID), escalationBody).Status
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
	path := contract.SupersedeEscalation.URL(p.ID, e.ID)
	body := `{"title":"Delay beta by a month?","context":{"risk":"vendor EOL"},"options":[{"option":"Delay a month"}]}`
	first := s.Do(t, contract.SupersedeEscalation.Method, path, body, api.IdempotencyHeader, "sup-1")
	again := s.Do(t, contract.SupersedeEscalation.Method, path, body, api.IdempotencyHeader, "sup-1")
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
	s.MustRoute(t, 200, contract.GetEscalation, "", &old, p.ID, e.ID)
	assert.Equal(t, agenticpm.EscalationSuperseded, old.Status, "old: status")
	assert.Equal(t, n.ID, old.SupersededBy, "old: supersededBy")
	assert.NotEmpty(t, old.SupersededAt, "old: supersededAt")
	before := s.Count(t)
	apitest.WantError(t, s.Do(t, contract.SupersedeEscalation.Method, path, body), 409, "conflict", "", "superseded")
	assert.Equal(t, before, s.Count(t), "items: a refused supersede wrote")
	s.MustRoute(t, 200, contract.Decide, `{"userDecision":"ok"}`, nil, p.ID, n.ID)
	before = s.Count(t)
	apitest.WantError(t, s.Do(t, contract.SupersedeEscalation.Method, contract.SupersedeEscalation.URL(p.ID, n.ID), body), 409, "conflict", "", "decided")
	apitest.WantError(t, s.Do(t, contract.SupersedeEscalation.Method, contract.SupersedeEscalation.URL(missingID, n.ID), body), 404, "not_found", "", "project")
	apitest.WantError(t, s.Do(t, contract.SupersedeEscalation.Method, contract.SupersedeEscalation.URL(p.ID, "3f1d7e3a-9999-4000-8000-000000000000"), body), 404, "not_found", "", "escalation")
	apitest.WantError(t, s.Do(t, contract.SupersedeEscalation.Method, path, `{"title":"no options","context":{}}`), 400, "validation_failed", "options", "")
	assert.Equal(t, before, s.Count(t), "items: a refused supersede wrote")
}

// Held without a time: held for hold_queue_minutes (the stored override,
// else 30); a setting that is no usable number is refused when stored.
func TestHeldDefault(t *testing.T) {
	clock := apitest.NewClock(time.Now().UTC(), time.Millisecond)
	s := newService(t, clock.Now)
	p := s.project(t, "")
	path := contract.ListActions.URL(p.ID)
	minutes := func(a agenticpm.Action) float64 {
		c, _ := time.Parse(time.RFC3339Nano, a.CreatedAt)
		h, err := time.Parse(time.RFC3339Nano, a.HeldUntil)
		require.NoError(t, err, "heldUntil %q", a.HeldUntil)
		return h.Sub(c).Minutes()
	}
	var a agenticpm.Action
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"email_sent","description":"status","held":true}`, &a, p.ID)
	assert.Equal(t, 30.0, minutes(a), "minutes held by default")
	assert.Equal(t, "HOLD#pending", s.raw(t, "PROJECT#"+p.ID, "ACTION#"+a.CreatedAt+"#"+a.ID)["GSI1PK"], "GSI1PK: not in the hold queue")
	s.MustRoute(t, 200, contract.PutAgentConfig, `{"value":45}`, nil, "hold_queue_minutes")
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"email_sent","description":"status","held":true}`, &a, p.ID)
	assert.Equal(t, 45.0, minutes(a), "minutes held with the setting at 45")
	var free agenticpm.Action
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"email_sent","description":"status","held":false}`, &free, p.ID)
	assert.Empty(t, free.HeldUntil, "held:false held until")
	before := s.Count(t)
	apitest.WantError(t, s.Do(t, contract.RecordAction.Method, path, `{"actionType":"x","description":"d","held":false,"heldUntil":"2030-01-01T00:00:00Z"}`), 400, "validation_failed", "held", "")
	apitest.WantError(t, s.Do(t, contract.RecordAction.Method, path, `{"actionType":"x","description":"d","held":null}`), 400, "validation_failed", "held", "")
	apitest.WantError(t, s.Do(t, contract.PutAgentConfig.Method, contract.PutAgentConfig.URL("hold_queue_minutes"), `{"value":"half an hour"}`), 400, "validation_failed", "value", "number")
	apitest.WantError(t, s.Do(t, contract.PutAgentConfig.Method, contract.PutAgentConfig.URL("hold_queue_minutes"), `{"value":100000}`), 400, "validation_failed", "value", "")
	assert.Equal(t, before, s.Count(t), "items: a refused request wrote")
	// A value stored before the check (an older item) falls back to the
	// default rather than failing every held action.
	s.putRaw(t, map[string]any{"PK": "AGENT", "SK": "CONFIG#hold_queue_minutes", "key": "hold_queue_minutes", "value": "soon", "updatedAt": "2026-01-01T00:00:00.000000Z"})
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"email_sent","description":"status","held":true}`, &a, p.ID)
	assert.Equal(t, 30.0, minutes(a), "minutes held with an unusable setting: the default")
}

// An action recorded without a hold is marked executed once; held,
// cancelled and executed ones are refused; a lost answer is not a 409.
func TestMarkExecuted(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	var plain, held agenticpm.Action
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"jira_update","description":"comment on MCU-1"}`, &plain, p.ID)
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"email_sent","description":"held","held":true}`, &held, p.ID)

	var done agenticpm.Action
	s.MustRoute(t, 200, contract.MarkActionExecuted, "", &done, p.ID, plain.ID)
	assert.True(t, done.Executed, "executed")
	assert.NotEmpty(t, done.ExecutedAt, "executed: executedAt")
	assert.Equal(t, plain.ID, done.ID, "executed: id")
	assert.Empty(t, done.HeldUntil, "executed: heldUntil")
	apitest.WantError(t, s.Do(t, contract.MarkActionExecuted.Method, contract.MarkActionExecuted.URL(p.ID, plain.ID), ""), 409, "conflict", "", "is executed")
	apitest.WantError(t, s.Do(t, contract.MarkActionExecuted.Method, contract.MarkActionExecuted.URL(p.ID, held.ID), ""), 409, "conflict", "", "release it instead")
	s.MustRoute(t, 200, contract.CancelAction, "", nil, p.ID, held.ID)
	apitest.WantError(t, s.Do(t, contract.MarkActionExecuted.Method, contract.MarkActionExecuted.URL(p.ID, held.ID), ""), 409, "conflict", "", "cancelled")
	apitest.WantError(t, s.Do(t, contract.MarkActionExecuted.Method, contract.MarkActionExecuted.URL(p.ID, "01ARZ3NDEKTSV4RRFFQ69G5FAV"), ""), 404, "not_found", "", "action")
	apitest.WantError(t, s.Do(t, contract.MarkActionExecuted.Method, contract.MarkActionExecuted.URL(missingID, plain.ID), ""), 404, "not_found", "", "")

	// Twenty at once: one 200.
	var again agenticpm.Action
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"jira_update","description":"again"}`, &again, p.ID)
	codes := make([]int, 20)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() {
			codes[i] = s.Do(t, contract.MarkActionExecuted.Method, contract.MarkActionExecuted.URL(p.ID, again.ID), "").Status
		})
	}
	wg.Wait()
	assert.Equal(t, 1, strings.Count(fmt.Sprint(codes), "200"), "%v: markings", codes)

	// The answer lost after DynamoDB applied it: the SDK's retry finds
	// its own token and answers 200.
	client, proxy := servicetest.FaultyClient(t, "agenticpm")
	cfg := s.cfg
	cfg.Client = client
	lossy := s.Service
	lossy.H = newAPI(cfg)
	var lost agenticpm.Action
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"jira_update","description":"lost"}`, &lost, p.ID)
	proxy.NextOn("UpdateItem", ddbfault.DropAnswer, 1)
	lossy.MustRoute(t, 200, contract.MarkActionExecuted, "", &done, p.ID, lost.ID)
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
	lossy.H = newAPI(cfg)

	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	var e agenticpm.Escalation
	lossy.MustRoute(t, 201, contract.CreateEscalation, escalationBody, &e, p.ID)
	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	var n agenticpm.Escalation
	lossy.MustRoute(t, 201, contract.SupersedeEscalation, escalationBody, &n, p.ID, e.ID)
	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	lossy.MustRoute(t, 200, contract.Decide, `{"userDecision":"ok"}`, nil, p.ID, n.ID)
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationCreated, 2)
	s.wantFeed(t, p.ID, agenticpm.EventTypeEscalationDecided, 1)

	// The job's expiry with its answer lost.
	var x agenticpm.Escalation
	s.MustRoute(t, 201, contract.CreateEscalation, escalationWithDeadline(s.clock.Now().Add(agenticpm.MinEscalationExpiry+time.Second)), &x, p.ID)
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
	s.MustRoute(t, 201, contract.PutArtefact, `{"content":{"items":[]}}`, nil, p.ID, "raid_log")
	s.MustRoute(t, 200, contract.PutArtefact, `{"content":{"items":[`+raidItem+`]},"expectedVersion":1}`, nil, p.ID, "raid_log")
	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	var u agenticpm.Artefact
	r := lossy.Do(t, contract.UndoArtefact.Method, contract.UndoArtefact.URL(p.ID, "raid_log"), "", "If-Match", `"2"`)
	require.Equal(t, 200, r.Status, "undo with a lost answer: %s", r.Body)
	r.JSON(t, &u)
	assert.Equal(t, 3, u.Version, "undo with a lost answer: version")
	assert.Equal(t, `{"items":[]}`, string(u.Content), "undo with a lost answer: content")
	assert.Equal(t, 5, proxy.Faults(), "faults injected")
}
