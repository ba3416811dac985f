package agenticpm_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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
	if r.Status != 201 || r.Header.Get("Location") != "projects/"+p.ID+"/escalations/"+e.ID {
		t.Fatalf("create: %d %v %s", r.Status, r.Header, r.Body)
	}
	created, _ := time.Parse(time.RFC3339Nano, e.CreatedAt)
	if exp, _ := time.Parse(time.RFC3339Nano, e.ExpiresAt); exp.Sub(created) != 72*time.Hour {
		t.Errorf("expiresAt %s for createdAt %s: want the default 72 hours later", e.ExpiresAt, e.CreatedAt)
	}
	var got agenticpm.Escalation
	s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations/"+e.ID, "", &got)
	if got.ID != e.ID || got.ExpiresAt != e.ExpiresAt || got.Status != agenticpm.EscalationPending || len(got.Options) != len(e.Options) {
		t.Errorf("get %+v, created %+v", got, e)
	}
	if pn, gn := s.feed(t, p.ID, agenticpm.EventTypeEscalationCreated); pn != 1 || gn != 1 {
		t.Errorf("escalation_created: %d in the project feed, %d in GLOBAL; want 1 and 1", pn, gn)
	}

	// The stored override of the deadline, and an explicit one.
	s.Must(t, 200, "PUT", "/agent/config/escalation_expiry_hours", `{"value":2}`, nil)
	var short agenticpm.Escalation
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationBody, &short)
	c, _ := time.Parse(time.RFC3339Nano, short.CreatedAt)
	if exp, _ := time.Parse(time.RFC3339Nano, short.ExpiresAt); exp.Sub(c) != 2*time.Hour {
		t.Errorf("expiresAt %s for createdAt %s: want the stored 2 hours later", short.ExpiresAt, short.CreatedAt)
	}
	at := clock.Now().Add(5 * time.Hour).Truncate(time.Second)
	var given agenticpm.Escalation
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(at), &given)
	if given.ExpiresAt != agenticpm.Timestamp(at) {
		t.Errorf("expiresAt %s, want %s", given.ExpiresAt, agenticpm.Timestamp(at))
	}

	var d agenticpm.Escalation
	s.Must(t, 200, "POST", "/projects/"+p.ID+"/escalations/"+e.ID+"/decision", `{"userDecision":"Delay"}`, &d)
	if d.Status != agenticpm.EscalationDecided || d.ExpiresAt != e.ExpiresAt || d.Title != e.Title {
		t.Errorf("decided %+v", d)
	}
	s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations/"+e.ID, "", &got)
	if got.Status != agenticpm.EscalationDecided || got.UserDecision != "Delay" || got.DecidedAt != d.DecidedAt {
		t.Errorf("stored after the decision %+v", got)
	}
	if pn, gn := s.feed(t, p.ID, agenticpm.EventTypeEscalationDecided); pn != 1 || gn != 1 {
		t.Errorf("escalation_decided: %d in the project feed, %d in GLOBAL; want 1 and 1", pn, gn)
	}

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
		{"deadline beyond a year", "POST", base, escalationWithDeadline(clock.Now().Add(400 * 24 * time.Hour)), 400, "validation_failed", "expiresAt", ""},
		{"deadline not a time", "POST", base, `{"title":"t","context":{},"options":[{}],"expiresAt":"tomorrow"}`, 400, "validation_failed", "expiresAt", ""},
		{"expiry setting not a number", "PUT", "/agent/config/escalation_expiry_hours", `{"value":"soon"}`, 400, "validation_failed", "value", "number"},
		{"expiry setting zero", "PUT", "/agent/config/escalation_expiry_hours", `{"value":0}`, 400, "validation_failed", "value", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, tt.method, tt.path, tt.body), tt.status, tt.code, tt.field, tt.msg)
		})
	}
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d: a refused request wrote", before, after)
	}
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
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(now.Add(time.Minute)), &soon)
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(now.Add(time.Hour)), &later)

	rep, err := s.job().ExpireOnce(context.Background())
	if err != nil || rep.Overdue != 0 || rep.Expired != 0 {
		t.Fatalf("before the deadline: %+v %v", rep, err)
	}
	s.clock.Advance(2 * time.Minute)
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+p.ID+"/escalations/"+soon.ID+"/decision", `{"userDecision":"late"}`), 409, "conflict", "", "deadline")
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+p.ID+"/escalations/"+soon.ID+"/supersede", escalationBody), 409, "conflict", "", "deadline")

	// A whole run, as Lambda invokes it: release half and expiry half.
	if err := s.job().Run(context.Background(), fn.ScheduleEvent{ScheduledTime: s.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	var got agenticpm.Escalation
	s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations/"+soon.ID, "", &got)
	if got.Status != agenticpm.EscalationExpired || got.ExpiredAt == "" || got.UserDecision != "" {
		t.Errorf("after the run %+v", got)
	}
	if item := s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+soon.ID); item["GSI1PK"] != "ESCALATION#expired" {
		t.Errorf("GSI1PK %v: the pending view would keep listing it", item["GSI1PK"])
	}
	if pending, _ := all[agenticpm.Escalation](t, s.service, "/escalations?status=pending"); len(pending) != 1 || pending[0].ID != later.ID {
		t.Errorf("pending %+v", pending)
	}
	if expired, _ := all[agenticpm.Escalation](t, s.service, "/escalations?status=expired"); len(expired) != 1 || expired[0].ID != soon.ID {
		t.Errorf("expired %+v", expired)
	}
	if pn, gn := s.feed(t, p.ID, agenticpm.EventTypeEscalationExpired); pn != 1 || gn != 1 {
		t.Errorf("escalation_expired: %d in the project feed, %d in GLOBAL; want 1 and 1", pn, gn)
	}
	rep, err = s.job().ExpireOnce(context.Background())
	if err != nil || rep.Expired != 0 {
		t.Errorf("a second run: %+v %v", rep, err)
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
		s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(s.clock.Now().Add(time.Minute)), &e)
		s.clock.Advance(2 * time.Minute)
		var wg sync.WaitGroup
		var mu sync.Mutex
		expired := 0
		for range 20 {
			wg.Go(func() {
				rep, err := s.job().ExpireOnce(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				expired += rep.Expired
				mu.Unlock()
			})
		}
		wg.Wait()
		if expired != 1 {
			t.Errorf("%d expiries of one escalation, want 1", expired)
		}
		if pn, gn := s.feed(t, p.ID, agenticpm.EventTypeEscalationExpired); pn != 1 || gn != 1 {
			t.Errorf("escalation_expired: %d, %d; want 1 and 1", pn, gn)
		}
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
				if winner.ID != "" {
					t.Errorf("a second 201: %s", r.Body)
				}
				r.JSON(t, &winner)
			case 409:
			default:
				t.Errorf("supersede: %d %s", r.Status, r.Body)
			}
		}
		var old agenticpm.Escalation
		s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations/"+e.ID, "", &old)
		if winner.ID == "" || old.Status != agenticpm.EscalationSuperseded || old.SupersededBy != winner.ID || winner.Supersedes != e.ID {
			t.Fatalf("old %+v, winner %+v", old, winner)
		}
		mine, _ := all[agenticpm.Escalation](t, s.service, "/projects/"+p.ID+"/escalations?")
		replacements := 0
		for _, x := range mine {
			if x.Supersedes == e.ID {
				replacements++
			}
		}
		if replacements != 1 {
			t.Errorf("%d escalations superseding %s, want 1", replacements, e.ID)
		}
		if n, _ := s.feed(t, p.ID, agenticpm.EventTypeEscalationCreated); n != createdBefore+1 {
			t.Errorf("escalation_created events %d → %d, want one more", createdBefore, n)
		}
		if item := s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+e.ID); item["GSI1PK"] != "ESCALATION#superseded" {
			t.Errorf("GSI1PK of the superseded one %v", item["GSI1PK"])
		}
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
				t.Errorf("status %d", c)
			}
		}
		if wins != 1 {
			t.Errorf("%v: %d changes of one escalation, want 1", statuses, wins)
		}
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
	if first.Status != 201 || again.Status != 201 || string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("first %d %s; again %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	var n agenticpm.Escalation
	first.JSON(t, &n)
	if n.Supersedes != e.ID || n.Status != agenticpm.EscalationPending || n.Title != "Delay beta by a month?" || n.ID == e.ID {
		t.Errorf("new %+v", n)
	}
	var old agenticpm.Escalation
	s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations/"+e.ID, "", &old)
	if old.Status != agenticpm.EscalationSuperseded || old.SupersededBy != n.ID || old.SupersededAt == "" {
		t.Errorf("old %+v", old)
	}
	before := s.Count(t)
	apitest.WantError(t, s.Do(t, "POST", path, body), 409, "conflict", "", "superseded")
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d: a refused supersede wrote", before, after)
	}
	s.Must(t, 200, "POST", "/projects/"+p.ID+"/escalations/"+n.ID+"/decision", `{"userDecision":"ok"}`, nil)
	before = s.Count(t)
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+p.ID+"/escalations/"+n.ID+"/supersede", body), 409, "conflict", "", "decided")
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+missingID+"/escalations/"+n.ID+"/supersede", body), 404, "not_found", "", "project")
	apitest.WantError(t, s.Do(t, "POST", "/projects/"+p.ID+"/escalations/3f1d7e3a-9999-4000-8000-000000000000/supersede", body), 404, "not_found", "", "escalation")
	apitest.WantError(t, s.Do(t, "POST", path, `{"title":"no options","context":{}}`), 400, "validation_failed", "options", "")
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d: a refused supersede wrote", before, after)
	}
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
		if err != nil {
			t.Fatalf("heldUntil %q: %v", a.HeldUntil, err)
		}
		return h.Sub(c).Minutes()
	}
	var a agenticpm.Action
	s.Must(t, 201, "POST", path, `{"actionType":"email_sent","description":"status","held":true}`, &a)
	if m := minutes(a); m != 30 {
		t.Errorf("held %v minutes by default, want 30", m)
	}
	if item := s.raw(t, "PROJECT#"+p.ID, "ACTION#"+a.CreatedAt+"#"+a.ID); item["GSI1PK"] != "HOLD#pending" {
		t.Errorf("GSI1PK %v: not in the hold queue", item["GSI1PK"])
	}
	s.Must(t, 200, "PUT", "/agent/config/hold_queue_minutes", `{"value":45}`, nil)
	s.Must(t, 201, "POST", path, `{"actionType":"email_sent","description":"status","held":true}`, &a)
	if m := minutes(a); m != 45 {
		t.Errorf("held %v minutes with the setting at 45", m)
	}
	var free agenticpm.Action
	s.Must(t, 201, "POST", path, `{"actionType":"email_sent","description":"status","held":false}`, &free)
	if free.HeldUntil != "" {
		t.Errorf("held:false held until %s", free.HeldUntil)
	}
	before := s.Count(t)
	apitest.WantError(t, s.Do(t, "POST", path, `{"actionType":"x","description":"d","held":false,"heldUntil":"2030-01-01T00:00:00Z"}`), 400, "validation_failed", "held", "")
	apitest.WantError(t, s.Do(t, "POST", path, `{"actionType":"x","description":"d","held":null}`), 400, "validation_failed", "held", "")
	apitest.WantError(t, s.Do(t, "PUT", "/agent/config/hold_queue_minutes", `{"value":"half an hour"}`), 400, "validation_failed", "value", "number")
	apitest.WantError(t, s.Do(t, "PUT", "/agent/config/hold_queue_minutes", `{"value":100000}`), 400, "validation_failed", "value", "")
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d: a refused request wrote", before, after)
	}
	// A value stored before the check (an older item) falls back to the
	// default rather than failing every held action.
	s.putRaw(t, map[string]any{"PK": "AGENT", "SK": "CONFIG#hold_queue_minutes", "key": "hold_queue_minutes", "value": "soon", "updatedAt": "2026-01-01T00:00:00.000000Z"})
	s.Must(t, 201, "POST", path, `{"actionType":"email_sent","description":"status","held":true}`, &a)
	if m := minutes(a); m != 30 {
		t.Errorf("held %v minutes with an unusable setting, want the default 30", m)
	}
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
	if !done.Executed || done.ExecutedAt == "" || done.ID != plain.ID || done.HeldUntil != "" {
		t.Errorf("executed %+v", done)
	}
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
	if got := strings.Count(fmt.Sprint(codes), "200"); got != 1 {
		t.Errorf("%v: %d markings, want 1", codes, got)
	}

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
	if !done.Executed {
		t.Errorf("after a lost answer %+v", done)
	}
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
	if c, g := s.feed(t, p.ID, agenticpm.EventTypeEscalationCreated); c != 2 || g != 2 {
		t.Errorf("escalation_created %d, %d; want 2 and 2", c, g)
	}
	if c, g := s.feed(t, p.ID, agenticpm.EventTypeEscalationDecided); c != 1 || g != 1 {
		t.Errorf("escalation_decided %d, %d; want 1 and 1", c, g)
	}

	// The job's expiry with its answer lost.
	var x agenticpm.Escalation
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/escalations", escalationWithDeadline(s.clock.Now().Add(time.Minute)), &x)
	s.clock.Advance(2 * time.Minute)
	jcfg := s.cfg
	jcfg.Client = client
	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	rep, err := agenticpm.NewReleaseJobFromConfig(jcfg).ExpireOnce(context.Background())
	if err != nil || rep.Expired != 1 {
		t.Errorf("expiry with a lost answer: %+v %v", rep, err)
	}
	if c, g := s.feed(t, p.ID, agenticpm.EventTypeEscalationExpired); c != 1 || g != 1 {
		t.Errorf("escalation_expired %d, %d; want 1 and 1", c, g)
	}

	// An undo with its answer lost.
	path := "/projects/" + p.ID + "/artefacts/raid_log"
	s.Must(t, 201, "PUT", path, `{"content":{"items":[]}}`, nil)
	s.Must(t, 200, "PUT", path, `{"content":{"items":[`+raidItem+`]},"expectedVersion":1}`, nil)
	proxy.NextOn("TransactWriteItems", ddbfault.DropAnswer, 1)
	var u agenticpm.Artefact
	r := lossy.Do(t, "POST", path+"/undo", "", "If-Match", `"2"`)
	if r.Status != 200 {
		t.Fatalf("undo with a lost answer: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &u)
	if u.Version != 3 || string(u.Content) != `{"items":[]}` {
		t.Errorf("undo with a lost answer %+v", u)
	}
	if proxy.Faults() != 5 {
		t.Errorf("%d faults injected, want 5", proxy.Faults())
	}
}
