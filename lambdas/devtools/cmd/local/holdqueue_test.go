package main_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	pm "github.com/dynastack/dynastack/constructs/agenticpm/contract"
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
	var p struct {
		ID string `json:"id"`
	}
	call(t, pm.CreateProject.Method, at(r.base, pm.Name, pm.CreateProject), `{"name":"MCU","source":"jira","sourceProjectKey":"MCU","autonomyLevel":"monitoring"}`, 201, &p)
	until := time.Now().Add(agenticpm.MinHold + time.Minute).UTC().Format(time.RFC3339Nano)
	var a struct {
		ID        string `json:"id"`
		CreatedAt string `json:"createdAt"`
	}
	call(t, pm.RecordAction.Method, at(r.base, pm.Name, pm.RecordAction, p.ID), fmt.Sprintf(`{"actionType":"email_sent","description":"status","heldUntil":%q}`, until), 201, &a)
	// Its hold runs out.
	backdate(t, r, pm.ProjectPK(p.ID), pm.ActionSK(a.CreatedAt, a.ID), map[string]func(string) string{
		pm.AttrHeldUntil: func(past string) string { return past },
		pm.AttrGSI1SK:    func(past string) string { return past + "#" + a.ID },
	})
	call(t, "POST", r.base+"/_local/schedules/agenticpm-release", "", 200, nil)
	var acts struct {
		Items []struct {
			ID           string `json:"id"`
			Executed     bool   `json:"executed"`
			ReleasedBy   string `json:"releasedBy"`
			DispatchedAt string `json:"dispatchedAt"`
		} `json:"items"`
	}
	call(t, pm.ListActions.Method, at(r.base, pm.Name, pm.ListActions, p.ID), "", 200, &acts)
	require.Len(t, acts.Items, 1, "actions")
	require.True(t, acts.Items[0].Executed, "action executed: %+v", acts.Items[0])
	require.Equal(t, "schedule", acts.Items[0].ReleasedBy, "action released by")
	require.NotEmpty(t, acts.Items[0].DispatchedAt, "action dispatched at")
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
		assert.Equal(t, "agenticpm/action/"+a.ID, d.IdempotencyKey, "detail's idempotency key")
	}
}
