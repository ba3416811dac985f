package main_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	pm "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	pmclient "github.com/dynastack/dynastack/lambdas/client/agenticpm"
	"github.com/dynastack/dynastack/lambdas/client/opt"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// AgenticPM's hold queue as make dev runs it: a held action whose hold has
// run out (backdated) is released by a run of the release job,
// and its event reaches the EventBridge fake on the stage's bus.
func TestHoldQueueReleasedWhenDue(t *testing.T) {
	t.Parallel()
	// LOCAL_SCHEDULE_EVERY: only the first run, 2 s after start.
	r := startEnv(t, filepath.Dir(testenv.Template(t, "dev", "agenticpm")), []string{"LOCAL_SCHEDULE_EVERY=1h"})
	// The agent's calls, through the generated client (lambdas/client/agenticpm).
	c, err := pmclient.NewClientWithResponses(r.base + "/" + pm.Name)
	require.NoError(t, err)
	p, err := c.CreateProjectWithResponse(t.Context(), nil, pmclient.CreateProjectJSONRequestBody{Name: new("MCU"), Source: new("jira"),
		SourceProjectKey: new("MCU"), AutonomyLevel: new("monitoring")})
	answered(t, 201, p, p.Body, err, "create project")
	pid, err := uuid.Parse(p.JSON201.Id)
	require.NoError(t, err, "project id is a UUID")
	until := time.Now().Add(agenticpm.MinHold + time.Minute).UTC().Format(time.RFC3339Nano)
	a, err := c.RecordActionWithResponse(t.Context(), pid, nil, pmclient.RecordActionJSONRequestBody{ActionType: new("email_sent"),
		Description: new("status"), HeldUntil: &until})
	answered(t, 201, a, a.Body, err, "record action")
	// Its hold runs out.
	backdate(t, r, pm.ProjectPK(p.JSON201.Id), pm.ActionSK(a.JSON201.CreatedAt, a.JSON201.Id), map[string]func(string) string{
		pm.AttrHeldUntil: func(past string) string { return past },
		pm.AttrGSI1SK:    func(past string) string { return past + "#" + a.JSON201.Id },
	})
	call(t, "POST", r.base+"/_local/schedules/agenticpm-release", "", 200, nil)
	acts, err := c.ListActionsWithResponse(t.Context(), pid, nil)
	answered(t, 200, acts, acts.Body, err, "list actions")
	items := opt.Value(acts.JSON200.Items)
	require.Len(t, items, 1, "actions")
	require.True(t, items[0].Executed, "action executed: %+v", items[0])
	require.Equal(t, "schedule", opt.Value(items[0].ReleasedBy), "action released by")
	require.NotEmpty(t, opt.Value(items[0].DispatchedAt), "action dispatched at")
	var evs struct {
		Events []struct {
			Bus, DetailType, Detail string
		} `json:"events"`
	}
	call(t, "GET", r.base+"/_local/events", "", 200, &evs)
	require.Len(t, evs.Events, 1, "events")
	require.Equal(t, "agenticpm-dev", evs.Events[0].Bus, "event bus")
	require.Equal(t, "AgentActionReleased", evs.Events[0].DetailType, "event detail type")
	var d struct {
		IdempotencyKey string `json:"idempotencyKey"`
	}
	if assert.NoError(t, json.Unmarshal([]byte(evs.Events[0].Detail), &d), "detail %s", evs.Events[0].Detail) {
		assert.Equal(t, "agenticpm/action/"+a.JSON201.Id, d.IdempotencyKey, "detail's idempotency key")
	}
}
