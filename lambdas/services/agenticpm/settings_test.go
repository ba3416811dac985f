package agenticpm_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

func TestActions(t *testing.T) {
	c := apitest.NewClock(future().Add(9*time.Hour), time.Second)
	s := newService(t, c.Now)
	p := s.project(t, "")
	var a agenticpm.Action
	// heldUntil in Sydney's summer time, stored in UTC.
	until := c.Now().Add(2 * time.Hour).Truncate(time.Minute)
	body := `{"actionType":"email_sent","description":"Weekly status","confidence":{"overall":0.92},"heldUntil":"` + until.In(time.FixedZone("AEDT", 11*3600)).Format(time.RFC3339) + `"}`
	s.MustRoute(t, 201, contract.RecordAction, body, &a, p.ID)
	assert.False(t, a.Executed, "action: executed")
	assert.Equal(t, until.UTC().Format("2006-01-02T15:04:05.000000Z"), a.HeldUntil, "action: heldUntil")
	assert.Len(t, a.ID, 26, "action: id")
	assert.Equal(t, `{"overall":0.92}`, string(a.Confidence), "action: confidence")
	item := s.raw(t, "PROJECT#"+p.ID, "ACTION#"+a.CreatedAt+"#"+a.ID)
	created, _ := time.Parse(time.RFC3339Nano, a.CreatedAt)
	assert.Equal(t, float64(created.Add(90*24*time.Hour).Unix()), item["TTL"], "stored TTL")
	assert.Equal(t, false, item["executed"], "stored executed")
	c.Advance(10 * 24 * time.Hour)
	var b agenticpm.Action
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"jira_update","description":"Moved MCU-1"}`, &b, p.ID)
	got, _ := all[agenticpm.Action](t, s, contract.ListActions.URLQuery(svc.Values{svc.Limit: "1"}, p.ID))
	assert.Equal(t, []string{b.ID, a.ID}, actionIDs(got), "newest first")
	c.Set(created.Add(91 * 24 * time.Hour))
	got, _ = all[agenticpm.Action](t, s, contract.ListActions.URL(p.ID)+"?")
	assert.Equal(t, []string{b.ID}, actionIDs(got), "after 91 days")

	before := s.Count(t)
	for _, tt := range []struct {
		name, path, body string
		status           int
		code, field      string
	}{
		{"unknown project", contract.ListActions.URL(missingID), `{"actionType":"email_sent","description":"d"}`, 404, "not_found", ""},
		{"missing actionType", contract.ListActions.URL(p.ID), `{"description":"d"}`, 400, "validation_failed", "actionType"},
		{"missing description", contract.ListActions.URL(p.ID), `{"actionType":"email_sent"}`, 400, "validation_failed", "description"},
		{"bad heldUntil", contract.ListActions.URL(p.ID), `{"actionType":"email_sent","description":"d","heldUntil":"tomorrow"}`, 400, "validation_failed", "heldUntil"},
		{"null heldUntil", contract.ListActions.URL(p.ID), `{"actionType":"email_sent","description":"d","heldUntil":null}`, 400, "validation_failed", "heldUntil"},
		{"heldUntil in the past", contract.ListActions.URL(p.ID), heldUntil(c.Now().Add(-time.Hour)), 400, "validation_failed", "heldUntil"},
		{"heldUntil a second ahead", contract.ListActions.URL(p.ID), heldUntil(c.Now().Add(time.Second)), 400, "validation_failed", "heldUntil"},
		{"heldUntil past a week", contract.ListActions.URL(p.ID), heldUntil(c.Now().Add(agenticpm.MaxHoldQueue + time.Hour)), 400, "validation_failed", "heldUntil"},
		{"client executed", contract.ListActions.URL(p.ID), `{"actionType":"email_sent","description":"d","executed":true}`, 400, "validation_failed", "executed"},
		{"confidence list", contract.ListActions.URL(p.ID), `{"actionType":"email_sent","description":"d","confidence":[1]}`, 400, "validation_failed", "confidence"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, "POST", tt.path, tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	assert.Equal(t, before, s.Count(t), "items: a refused request wrote")
}

// heldUntil is an action's body held until at.
func heldUntil(at time.Time) string {
	return `{"actionType":"email_sent","description":"d","heldUntil":"` + at.Format(time.RFC3339Nano) + `"}`
}

// actionIDs lists the actions' ids, in order.
func actionIDs(as []agenticpm.Action) []string {
	var ids []string
	for _, a := range as {
		ids = append(ids, a.ID)
	}
	return ids
}

func TestCheckpoints(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	path := contract.GetCheckpoint.URL(p.ID, "jira", "last_sync")
	apitest.WantError(t, s.Do(t, contract.GetCheckpoint.Method, path, ""), 404, "not_found", "", "checkpoint")
	var c agenticpm.Checkpoint
	s.MustRoute(t, 200, contract.PutCheckpoint, `{"checkpointValue":"2026-02-04T10:30:00Z"}`, &c, p.ID, "jira", "last_sync")
	s.MustRoute(t, 200, contract.PutCheckpoint, `{"checkpointValue":"2026-02-04T10:45:00Z"}`, &c, p.ID, "jira", "last_sync")
	var got agenticpm.Checkpoint
	s.MustRoute(t, 200, contract.GetCheckpoint, "", &got, p.ID, "jira", "last_sync")
	assert.Equal(t, c, got, "get: the last put")
	assert.Equal(t, "2026-02-04T10:45:00Z", got.CheckpointValue, "get: value")
	assert.Equal(t, "jira", got.Integration, "get: integration")
	assert.Equal(t, "last_sync", got.CheckpointKey, "get: key")
	assert.Equal(t, p.ID, got.ProjectID, "get: project")
	before := s.Count(t)
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, field              string
	}{
		{"put under unknown project", contract.PutCheckpoint.Method, contract.PutCheckpoint.URL(missingID, "jira", "last_sync"), `{"checkpointValue":"v"}`, 404, "not_found", ""},
		{"get under unknown project", contract.GetCheckpoint.Method, contract.GetCheckpoint.URL(missingID, "jira", "last_sync"), "", 404, "not_found", ""},
		{"hash in key", contract.PutCheckpoint.Method, contract.PutCheckpoint.URL(p.ID, "jira", "a#b"), `{"checkpointValue":"v"}`, 400, "validation_failed", "key"},
		{"bad integration", contract.GetCheckpoint.Method, contract.GetCheckpoint.URL(p.ID, "-x", "last_sync"), "", 400, "validation_failed", "integration"},
		{"missing value", "PUT", path, `{}`, 400, "validation_failed", "checkpointValue"},
		{"numeric value", "PUT", path, `{"checkpointValue":5}`, 400, "validation_failed", "checkpointValue"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, tt.method, tt.path, tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	assert.Equal(t, before, s.Count(t), "items: orphan checkpoint?")
}

// listConfig pages through the agent config and renders each entry as
// key=value, with a * for a served default.
func listConfig(t *testing.T, s *service, limit int) (string, []int) {
	t.Helper()
	got, sizes := all[agenticpm.AgentConfig](t, s, fmt.Sprintf(contract.ListAgentConfig.URL()+"?limit=%d", limit))
	var out []string
	for _, c := range got {
		e := c.Key + "=" + string(c.Value)
		if c.Default {
			e += "*"
			assert.Empty(t, c.UpdatedAt, "default %s: updatedAt", c.Key)
		}
		out = append(out, e)
	}
	return strings.Join(out, " "), sizes
}

func TestAgentConfig(t *testing.T) {
	s := newService(t, nil)
	// Nothing stored: the documented defaults are served, marked.
	var c agenticpm.AgentConfig
	s.MustRoute(t, 200, contract.GetAgentConfig, "", &c, "polling_interval_minutes")
	assert.Equal(t, "15", string(c.Value), "default: value")
	assert.True(t, c.Default, "default: marked")
	assert.Equal(t, "polling_interval_minutes", c.Key, "default: key")
	apitest.WantError(t, s.Do(t, contract.GetAgentConfig.Method, contract.GetAgentConfig.URL("greeting"), ""), 404, "not_found", "", "agent config")
	const defaults = `budget_ceiling_daily_usd=0.33* escalation_expiry_hours=72* hold_queue_minutes=30* polling_interval_minutes=15* working_hours={"start":"08:00","end":"18:00","timezone":"Australia/Sydney"}*`
	for _, limit := range []int{1, 3, 4, 25} {
		got, sizes := listConfig(t, s, limit)
		assert.Equal(t, defaults, got, "limit %d", limit)
		assert.Len(t, sizes, (5+limit-1)/limit, "limit %d: pages", limit)
	}
	assert.Equal(t, 0, s.Count(t), "serving defaults wrote items")
	// Stored values override; defaults fill the key order around them.
	s.MustRoute(t, 200, contract.PutAgentConfig, `{"value":45}`, nil, "hold_queue_minutes")
	s.MustRoute(t, 200, contract.PutAgentConfig, `{"value":"hello"}`, nil, "greeting")
	s.MustRoute(t, 200, contract.PutAgentConfig, `{"value":1}`, nil, "aaa")
	s.MustRoute(t, 200, contract.GetAgentConfig, "", &c, "hold_queue_minutes")
	assert.Equal(t, "45", string(c.Value), "override: value")
	assert.False(t, c.Default, "override: marked default")
	assert.NotEmpty(t, c.UpdatedAt, "override: updatedAt")
	want := `aaa=1 budget_ceiling_daily_usd=0.33* escalation_expiry_hours=72* greeting="hello" hold_queue_minutes=45 polling_interval_minutes=15* working_hours={"start":"08:00","end":"18:00","timezone":"Australia/Sydney"}*`
	for limit, pages := range map[int]string{1: "[1 1 1 1 1 1 1]", 2: "[2 2 2 1]", 4: "[4 3]", 5: "[5 2]", 100: "[7]"} {
		got, sizes := listConfig(t, s, limit)
		assert.Equal(t, want, got, "limit %d", limit)
		assert.Equal(t, pages, fmt.Sprint(sizes), "limit %d: pages", limit)
	}
	for k, v := range agenticpm.DefaultAgentConfig {
		var c agenticpm.AgentConfig
		s.MustRoute(t, 200, contract.PutAgentConfig, `{"value":`+string(v)+`}`, &c, k)
		assert.Equal(t, k, c.Key, "put %s: key", k)
		assert.Equal(t, string(v), string(c.Value), "put %s: value", k)
		assert.False(t, c.Default, "put %s: marked default", k)
	}
	got, _ := listConfig(t, s, 2)
	assert.NotContains(t, got, "*", "stored keys still served as defaults")
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
			apitest.WantError(t, s.Do(t, contract.PutAgentConfig.Method, contract.PutAgentConfig.URL(tt.key), tt.body), 400, "validation_failed", tt.field, "")
		})
	}
	assert.Equal(t, before, s.Count(t), "items: a refused put wrote")
}
