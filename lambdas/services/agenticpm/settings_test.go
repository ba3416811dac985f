package agenticpm_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

func TestActions(t *testing.T) {
	c := apitest.NewClock(future().Add(9*time.Hour), time.Second)
	s := newService(t, c.Now)
	p := s.project(t, "")
	var a agenticpm.Action
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/actions", `{"actionType":"email_sent","description":"Weekly status","confidence":{"overall":0.92},"heldUntil":"2026-02-04T20:30:00+11:00"}`, &a)
	if a.Executed || a.HeldUntil != "2026-02-04T09:30:00.000000Z" || len(a.ID) != 26 || string(a.Confidence) != `{"overall":0.92}` {
		t.Errorf("action %+v", a)
	}
	item := s.raw(t, "PROJECT#"+p.ID, "ACTION#"+a.CreatedAt+"#"+a.ID)
	created, _ := time.Parse(time.RFC3339Nano, a.CreatedAt)
	if item["TTL"] != float64(created.Add(90*24*time.Hour).Unix()) || item["executed"] != false {
		t.Errorf("stored %v", item)
	}
	c.Advance(10 * 24 * time.Hour)
	var b agenticpm.Action
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/actions", `{"actionType":"jira_update","description":"Moved MCU-1"}`, &b)
	got, _ := all[agenticpm.Action](t, s, "/projects/"+p.ID+"/actions?limit=1")
	if len(got) != 2 || got[0].ID != b.ID || got[1].ID != a.ID {
		t.Errorf("newest first %+v", got)
	}
	c.Set(created.Add(91 * 24 * time.Hour))
	if got, _ := all[agenticpm.Action](t, s, "/projects/"+p.ID+"/actions?"); len(got) != 1 || got[0].ID != b.ID {
		t.Errorf("after 91 days %+v", got)
	}

	before := s.Count(t)
	for _, tt := range []struct {
		name, path, body string
		status           int
		code, field      string
	}{
		{"unknown project", "/projects/" + missingID + "/actions", `{"actionType":"email_sent","description":"d"}`, 404, "not_found", ""},
		{"missing actionType", "/projects/" + p.ID + "/actions", `{"description":"d"}`, 400, "validation_failed", "actionType"},
		{"missing description", "/projects/" + p.ID + "/actions", `{"actionType":"email_sent"}`, 400, "validation_failed", "description"},
		{"bad heldUntil", "/projects/" + p.ID + "/actions", `{"actionType":"email_sent","description":"d","heldUntil":"tomorrow"}`, 400, "validation_failed", "heldUntil"},
		{"null heldUntil", "/projects/" + p.ID + "/actions", `{"actionType":"email_sent","description":"d","heldUntil":null}`, 400, "validation_failed", "heldUntil"},
		{"client executed", "/projects/" + p.ID + "/actions", `{"actionType":"email_sent","description":"d","executed":true}`, 400, "validation_failed", "executed"},
		{"confidence list", "/projects/" + p.ID + "/actions", `{"actionType":"email_sent","description":"d","confidence":[1]}`, 400, "validation_failed", "confidence"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, "POST", tt.path, tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d", before, after)
	}
}

func TestCheckpoints(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	path := "/projects/" + p.ID + "/checkpoints/jira/last_sync"
	apitest.WantError(t, s.Do(t, "GET", path, ""), 404, "not_found", "", "checkpoint")
	var c agenticpm.Checkpoint
	s.Must(t, 200, "PUT", path, `{"checkpointValue":"2026-02-04T10:30:00Z"}`, &c)
	s.Must(t, 200, "PUT", path, `{"checkpointValue":"2026-02-04T10:45:00Z"}`, &c)
	var got agenticpm.Checkpoint
	s.Must(t, 200, "GET", path, "", &got)
	if got != c || got.CheckpointValue != "2026-02-04T10:45:00Z" || got.Integration != "jira" || got.CheckpointKey != "last_sync" || got.ProjectID != p.ID {
		t.Errorf("got %+v, put %+v", got, c)
	}
	before := s.Count(t)
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, field              string
	}{
		{"put under unknown project", "PUT", "/projects/" + missingID + "/checkpoints/jira/last_sync", `{"checkpointValue":"v"}`, 404, "not_found", ""},
		{"get under unknown project", "GET", "/projects/" + missingID + "/checkpoints/jira/last_sync", "", 404, "not_found", ""},
		{"hash in key", "PUT", "/projects/" + p.ID + "/checkpoints/jira/a%23b", `{"checkpointValue":"v"}`, 400, "validation_failed", "key"},
		{"bad integration", "GET", "/projects/" + p.ID + "/checkpoints/-x/last_sync", "", 400, "validation_failed", "integration"},
		{"missing value", "PUT", path, `{}`, 400, "validation_failed", "checkpointValue"},
		{"numeric value", "PUT", path, `{"checkpointValue":5}`, 400, "validation_failed", "checkpointValue"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, tt.method, tt.path, tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d: orphan checkpoint?", before, after)
	}
}

// listConfig pages through the agent config and renders each entry as
// key=value, with a * for a served default.
func listConfig(t *testing.T, s *service, limit int) (string, []int) {
	t.Helper()
	got, sizes := all[agenticpm.AgentConfig](t, s, fmt.Sprintf("/agent/config?limit=%d", limit))
	var out []string
	for _, c := range got {
		e := c.Key + "=" + string(c.Value)
		if c.Default {
			e += "*"
			if c.UpdatedAt != "" {
				t.Errorf("default %s has updatedAt %s", c.Key, c.UpdatedAt)
			}
		}
		out = append(out, e)
	}
	return strings.Join(out, " "), sizes
}

func TestAgentConfig(t *testing.T) {
	s := newService(t, nil)
	// Nothing stored: the documented defaults are served, marked.
	var c agenticpm.AgentConfig
	s.Must(t, 200, "GET", "/agent/config/polling_interval_minutes", "", &c)
	if string(c.Value) != "15" || !c.Default || c.Key != "polling_interval_minutes" {
		t.Errorf("default = %+v", c)
	}
	apitest.WantError(t, s.Do(t, "GET", "/agent/config/greeting", ""), 404, "not_found", "", "agent config")
	const defaults = `budget_ceiling_daily_usd=0.33* escalation_expiry_hours=72* hold_queue_minutes=30* polling_interval_minutes=15* working_hours={"start":"08:00","end":"18:00","timezone":"Australia/Sydney"}*`
	for _, limit := range []int{1, 3, 4, 25} {
		if got, sizes := listConfig(t, s, limit); got != defaults || len(sizes) != (5+limit-1)/limit {
			t.Errorf("limit %d: %s, pages %v", limit, got, sizes)
		}
	}
	if n := s.Count(t); n != 0 {
		t.Errorf("serving defaults wrote %d items", n)
	}
	// Stored values override; defaults fill the key order around them.
	s.Must(t, 200, "PUT", "/agent/config/hold_queue_minutes", `{"value":45}`, nil)
	s.Must(t, 200, "PUT", "/agent/config/greeting", `{"value":"hello"}`, nil)
	s.Must(t, 200, "PUT", "/agent/config/aaa", `{"value":1}`, nil)
	s.Must(t, 200, "GET", "/agent/config/hold_queue_minutes", "", &c)
	if string(c.Value) != "45" || c.Default || c.UpdatedAt == "" {
		t.Errorf("override = %+v", c)
	}
	want := `aaa=1 budget_ceiling_daily_usd=0.33* escalation_expiry_hours=72* greeting="hello" hold_queue_minutes=45 polling_interval_minutes=15* working_hours={"start":"08:00","end":"18:00","timezone":"Australia/Sydney"}*`
	for limit, pages := range map[int]string{1: "[1 1 1 1 1 1 1]", 2: "[2 2 2 1]", 4: "[4 3]", 5: "[5 2]", 100: "[7]"} {
		if got, sizes := listConfig(t, s, limit); got != want || fmt.Sprint(sizes) != pages {
			t.Errorf("limit %d: %s, pages %v (want %s)", limit, got, sizes, pages)
		}
	}
	for k, v := range agenticpm.DefaultAgentConfig {
		var c agenticpm.AgentConfig
		s.Must(t, 200, "PUT", "/agent/config/"+k, `{"value":`+string(v)+`}`, &c)
		if c.Key != k || string(c.Value) != string(v) || c.Default {
			t.Errorf("put %s: %+v", k, c)
		}
	}
	if got, _ := listConfig(t, s, 2); strings.Contains(got, "*") {
		t.Errorf("stored keys still served as defaults: %s", got)
	}
	before := s.Count(t)
	for _, tt := range []struct{ name, key, body, field string }{
		{"array", "k", `{"value":[1]}`, "value"},
		{"boolean", "k", `{"value":true}`, "value"},
		{"null", "k", `{"value":null}`, "value"},
		{"missing", "k", `{}`, "value"},
		{"bad key", "a%23b", `{"value":1}`, "key"},
		{"key too long", strings.Repeat("k", 65), `{"value":1}`, "key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, "PUT", "/agent/config/"+tt.key, tt.body), 400, "validation_failed", tt.field, "")
		})
	}
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d", before, after)
	}
}
