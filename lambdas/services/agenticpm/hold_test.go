package agenticpm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
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
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	clock := apitest.NewClock(time.Now().UTC(), time.Millisecond)
	s := newServiceWith(t, clock.Now, func(cfg *agenticpm.Config) {
		if !withBus {
			return
		}
		cfg.EventBus = bus
		cfg.Events = agenticpm.NewEvents(awsloop.ConfigAt("AKIDAGENTICPM", fake.URL()))
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

func (s *holdService) hold(t *testing.T, projectID, desc string, until time.Time) agenticpm.Action {
	t.Helper()
	var a agenticpm.Action
	body := fmt.Sprintf(`{"actionType":"email_sent","description":%q,"heldUntil":%q}`, desc, until.Format(time.RFC3339Nano))
	s.Must(t, 201, "POST", "/projects/"+projectID+"/actions", body, &a)
	return a
}

func (s *holdService) held(t *testing.T) []string {
	t.Helper()
	got, _ := all[agenticpm.Action](t, s.service, "/actions/held?limit=2")
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
		if e.Bus != bus || e.Source != agenticpm.EventSource || e.DetailType != agenticpm.EventDetailType || e.AccessKeyID != "AKIDAGENTICPM" {
			t.Errorf("event %+v", e)
		}
		var d agenticpm.EventDetail
		if err := json.Unmarshal([]byte(e.Detail), &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// feedCount counts action_taken events in a project's feed and in GLOBAL.
func (s *holdService) feedCount(t *testing.T, projectID string) (project, global int) {
	t.Helper()
	pe, _ := all[agenticpm.Event](t, s.service, "/projects/"+projectID+"/events?")
	ge, _ := all[agenticpm.Event](t, s.service, "/events?")
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
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/actions", `{"actionType":"jira_update","description":"not held"}`, &plain)

	// The hold queue lists held actions by due time, across projects.
	if got := strings.Join(s.held(t), ","); got != "cancel me,due,soon,later" {
		t.Fatalf("held = %s", got)
	}
	base := "/projects/" + p.ID + "/actions/"

	// Cancel takes it out for good.
	var c agenticpm.Action
	s.Must(t, 200, "POST", base+gone.ID+"/cancel", "", &c)
	if c.CancelledAt == "" || c.Executed {
		t.Errorf("cancelled = %+v", c)
	}
	apitest.WantError(t, s.Do(t, "POST", base+gone.ID+"/cancel", ""), 409, "conflict", "", "cancelled")
	apitest.WantError(t, s.Do(t, "POST", base+gone.ID+"/release", ""), 409, "conflict", "", "cancelled")
	apitest.WantError(t, s.Do(t, "POST", base+plain.ID+"/release", ""), 409, "conflict", "", "not held")
	apitest.WantError(t, s.Do(t, "POST", base+plain.ID+"/cancel", ""), 409, "conflict", "", "not held")

	// Refused requests change nothing.
	before := s.Items(t, s.Table)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{base + "01ARZ3NDEKTSV4RRFFQ69G5FAV/release", 404},                  // a ULID no action has
		{base + "not-a-ulid/release", 404},                                  // cannot name an action
		{"/projects/" + missingID + "/actions/" + due.ID + "/release", 404}, // another project
		{base + due.ID + "/release?now=1", 400},
		{base + due.ID + "/cancel?x=1", 400},
		{"/actions/held?due=1", 400},
		{"/actions/held?limit=0", 400},
		{"/actions/held?cursor=abc", 400},
	} {
		method := "POST"
		if strings.HasPrefix(tc.path, "/actions/held") {
			method = "GET"
		}
		if r := s.Do(t, method, tc.path, ""); r.Status != tc.status {
			t.Errorf("%s %s: %d %s, want %d", method, tc.path, r.Status, r.Body, tc.status)
		}
	}
	if after := s.Items(t, s.Table); len(after) != len(before) {
		t.Errorf("refused requests changed the item count %d → %d", len(before), len(after))
	}

	// Release now: not due yet, released all the same, event on the bus.
	var rel agenticpm.Released
	s.Must(t, 200, "POST", base+soon.ID+"/release", "", &rel)
	if !rel.Executed || rel.ExecutedAt == "" || rel.ReleasedBy != agenticpm.ReleasedByAPI || !rel.Dispatched {
		t.Errorf("released = %+v", rel)
	}
	apitest.WantError(t, s.Do(t, "POST", base+soon.ID+"/release", ""), 409, "conflict", "", "released")
	d := s.details(t)
	if len(d) != 1 || d[0].IdempotencyKey != "agenticpm/action/"+soon.ID || d[0].Action.ID != soon.ID || !d[0].Action.Executed || d[0].Action.Description != "soon" {
		t.Errorf("event details = %+v", d)
	}

	// The job releases what is due, and only that.
	rep, err := s.job().RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Due != 1 || rep.Released != 1 || rep.Sent != 1 || rep.Outbox != 0 {
		t.Errorf("run = %+v", rep)
	}
	if got := strings.Join(s.held(t), ","); got != "later" {
		t.Errorf("held after the run = %s", got)
	}
	d = s.details(t)
	if len(d) != 2 || d[1].Action.ID != due.ID || d[1].Action.ReleasedBy != agenticpm.ReleasedBySchedule {
		t.Errorf("event details = %+v", d)
	}
	// Stored: executed, out of every queue, event id recorded.
	for _, a := range []agenticpm.Action{soon, due} {
		it := s.raw(t, "PROJECT#"+p.ID, "ACTION#"+a.CreatedAt+"#"+a.ID)
		if it["executed"] != true || it["GSI1PK"] != nil || it["dispatchLease"] != nil || it["dispatchedAt"] == nil || it["eventId"] == nil {
			t.Errorf("stored %s = %v", a.Description, it)
		}
	}
	if proj, global := s.feedCount(t, p.ID); proj != 2 || global != 2 {
		t.Errorf("action_taken events: project %d, GLOBAL %d; want 2 each", proj, global)
	}
	// A second run finds nothing; the project listing shows every action.
	if rep, err := s.job().RunOnce(context.Background()); err != nil || rep.Due != 0 || rep.Sent != 0 {
		t.Errorf("second run = %+v, %v", rep, err)
	}
	acts, _ := all[agenticpm.Action](t, s.service, "/projects/"+p.ID+"/actions?")
	if len(acts) != 5 {
		t.Errorf("project lists %d actions, want 5", len(acts))
	}
	// Later becomes due when the clock passes it.
	s.clock.Advance(3 * time.Hour)
	if rep, err := s.job().RunOnce(context.Background()); err != nil || rep.Released != 1 {
		t.Errorf("run after 3h = %+v, %v", rep, err)
	}
	if len(s.details(t)) != 3 {
		t.Errorf("%d events, want 3", len(s.details(t)))
	}
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
			r := s.Do(t, "POST", "/projects/"+p.ID+"/actions/"+a.ID+"/release", "")
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
	if len(failures) > 0 {
		t.Fatalf("failures: %v", failures)
	}
	if apiWins+jobWins != 1 {
		t.Errorf("released %d times (API %d, job %d), want once", apiWins+jobWins, apiWins, jobWins)
	}
	if d := s.details(t); len(d) != 1 || d[0].Action.ID != a.ID {
		t.Errorf("events on the bus: %+v, want one", d)
	}
	if proj, global := s.feedCount(t, p.ID); proj != 1 || global != 1 {
		t.Errorf("action_taken events: project %d, GLOBAL %d; want 1 each", proj, global)
	}
	// Later runs (lease long gone) send nothing more: the outbox is empty.
	s.clock.Advance(agenticpm.DispatchLease + time.Minute)
	if rep, err := s.job().RunOnce(context.Background()); err != nil || rep.Sent != 0 || rep.Outbox != 0 {
		t.Errorf("later run = %+v, %v", rep, err)
	}
	if len(s.events.Events()) != 1 {
		t.Errorf("%d events after a later run", len(s.events.Events()))
	}
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
	s.Must(t, 200, "POST", "/projects/"+p.ID+"/actions/"+a.ID+"/release", "", &rel)
	if !rel.Executed || rel.Dispatched {
		t.Fatalf("released = %+v, want executed and not dispatched", rel)
	}
	if len(s.events.Events()) != 0 {
		t.Fatal("the failed entry was accepted")
	}
	// Within the lease, runs leave it to the releaser.
	rep, err := s.job().RunOnce(context.Background())
	if err != nil || rep.Outbox != 0 || rep.Sent != 0 {
		t.Errorf("run within the lease = %+v, %v", rep, err)
	}
	s.clock.Advance(agenticpm.DispatchLease + time.Second)
	var wg sync.WaitGroup
	for range 5 { // overlapping runs: one takes the lease
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.job().RunOnce(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	d := s.details(t)
	if len(d) != 1 || d[0].Action.ID != a.ID || d[0].IdempotencyKey != "agenticpm/action/"+a.ID {
		t.Fatalf("events = %+v, want the outbox entry once", d)
	}
	if rep, err := s.job().RunOnce(context.Background()); err != nil || rep.Outbox != 0 {
		t.Errorf("run after sending = %+v, %v", rep, err)
	}
}

// Without a bus the release still happens; the event waits in the outbox
// (here for good), and the job says so.
func TestReleaseWithoutBus(t *testing.T) {
	s := newHoldService(t, false)
	p := s.project(t, "")
	a := s.hold(t, p.ID, "no bus", s.clock.Now().Add(-time.Second))
	var rel agenticpm.Released
	s.Must(t, 200, "POST", "/projects/"+p.ID+"/actions/"+a.ID+"/release", "", &rel)
	if !rel.Executed || rel.Dispatched {
		t.Errorf("released = %+v", rel)
	}
	s.clock.Advance(agenticpm.DispatchLease + time.Second)
	err := s.job().Run(context.Background(), fn.ScheduleEvent{ScheduledTime: s.clock.Now()})
	if err == nil || !strings.Contains(err.Error(), contract.EnvEventBus) {
		t.Errorf("run without a bus: %v, want an error naming %s", err, contract.EnvEventBus)
	}
}

// An action can be larger than EventBridge takes (256 KB per call): its
// event goes without detail and confidence, marked trimmed, and the other
// releases of the run are sent with it.
func TestReleaseOfALargeAction(t *testing.T) {
	s := newHoldService(t, true)
	p := s.project(t, "")
	past := s.clock.Now().Add(-time.Second).Format(time.RFC3339Nano)
	big := fmt.Sprintf(`{"actionType":"email_sent","description":"big","detail":{"body":%q},"heldUntil":%q}`, strings.Repeat("x", 300<<10), past)
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/actions", big, nil)
	small := s.hold(t, p.ID, "small", s.clock.Now().Add(-time.Second))
	rep, err := s.job().RunOnce(context.Background())
	if err != nil || rep.Sent != 2 {
		t.Fatalf("run = %+v, %v", rep, err)
	}
	byDesc := map[string]agenticpm.EventDetail{}
	for _, d := range s.details(t) {
		byDesc[d.Action.Description] = d
	}
	if d := byDesc["big"]; !d.Trimmed || d.Action.Detail != nil || !d.Action.Executed {
		t.Errorf("big = trimmed %v, detail %d bytes", d.Trimmed, len(d.Action.Detail))
	}
	if d := byDesc["small"]; d.Trimmed || d.Action.ID != small.ID {
		t.Errorf("small = %+v", d)
	}
}
