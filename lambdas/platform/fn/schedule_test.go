package fn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The input as EventBridge Scheduler delivers it, context attributes
// replaced, decodes into the event.
func TestInputDecodes(t *testing.T) {
	r := strings.NewReplacer(
		"<aws.scheduler.schedule-arn>", "arn:aws:scheduler:eu-west-1:123456789012:schedule/default/s",
		"<aws.scheduler.scheduled-time>", "2025-10-21T14:30:00Z",
		"<aws.scheduler.execution-id>", "d32c5kddcf5bb8c3",
		"<aws.scheduler.attempt-number>", "2",
	)
	var ev fn.ScheduleEvent
	require.NoError(t, json.Unmarshal([]byte(r.Replace(service.ScheduleInput)), &ev))
	want := fn.ScheduleEvent{
		ScheduleARN:   "arn:aws:scheduler:eu-west-1:123456789012:schedule/default/s",
		ScheduledTime: time.Date(2025, 10, 21, 14, 30, 0, 0, time.UTC),
		ExecutionID:   "d32c5kddcf5bb8c3", AttemptNumber: 2,
	}
	assert.True(t, want.ScheduledTime.Equal(ev.ScheduledTime), "decoded ScheduledTime %v, want %v", ev.ScheduledTime, want.ScheduledTime)
	assert.Equal(t, want.ScheduleARN, ev.ScheduleARN, "decoded ScheduleARN")
	assert.Equal(t, want.ExecutionID, ev.ExecutionID, "decoded ExecutionID")
	assert.Equal(t, want.AttemptNumber, ev.AttemptNumber, "decoded AttemptNumber")
}

type jobFunc func(context.Context, fn.ScheduleEvent) error

func (f jobFunc) Run(ctx context.Context, ev fn.ScheduleEvent) error { return f(ctx, ev) }

func TestHandler(t *testing.T) {
	boom := errors.New("boom")
	at := time.Date(2025, 10, 21, 14, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		ev      fn.ScheduleEvent
		jobErr  error
		wantErr bool
		wantRun bool
		wantLog string
	}{
		{"ok", fn.ScheduleEvent{ScheduledTime: at}, nil, false, true, `"level":"INFO","msg":"scheduled run done"`},
		{"job error is returned for a retry", fn.ScheduleEvent{ScheduledTime: at}, boom, true, true, `"level":"ERROR","msg":"scheduled run failed"`},
		{"no fire time is dropped, not retried", fn.ScheduleEvent{}, nil, false, false, `"level":"ERROR","msg":"scheduled event refused"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			ran := false
			h := fn.JobHandler(jobFunc(func(_ context.Context, ev fn.ScheduleEvent) error {
				ran = true
				return tc.jobErr
			}), slog.New(slog.NewJSONHandler(&buf, nil)))
			err := h(context.Background(), tc.ev)
			if tc.wantErr {
				require.ErrorIs(t, err, boom)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.wantRun, ran, "ran")
			require.Contains(t, buf.String(), tc.wantLog, "log")
		})
	}
}
