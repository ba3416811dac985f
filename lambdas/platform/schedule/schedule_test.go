package schedule_test

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
	"github.com/dynastack/dynastack/lambdas/platform/schedule"
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
	var ev schedule.Event
	if err := json.Unmarshal([]byte(r.Replace(service.ScheduleInput)), &ev); err != nil {
		t.Fatal(err)
	}
	want := schedule.Event{
		ScheduleARN:   "arn:aws:scheduler:eu-west-1:123456789012:schedule/default/s",
		ScheduledTime: time.Date(2025, 10, 21, 14, 30, 0, 0, time.UTC),
		ExecutionID:   "d32c5kddcf5bb8c3", AttemptNumber: 2,
	}
	if !ev.ScheduledTime.Equal(want.ScheduledTime) || ev.ScheduleARN != want.ScheduleARN || ev.ExecutionID != want.ExecutionID || ev.AttemptNumber != want.AttemptNumber {
		t.Fatalf("decoded %+v, want %+v", ev, want)
	}
}

type jobFunc func(context.Context, schedule.Event) error

func (f jobFunc) Run(ctx context.Context, ev schedule.Event) error { return f(ctx, ev) }

func TestHandler(t *testing.T) {
	boom := errors.New("boom")
	at := time.Date(2025, 10, 21, 14, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		ev      schedule.Event
		jobErr  error
		wantErr bool
		wantRun bool
		wantLog string
	}{
		{"ok", schedule.Event{ScheduledTime: at}, nil, false, true, `"level":"INFO","msg":"scheduled run done"`},
		{"job error is returned for a retry", schedule.Event{ScheduledTime: at}, boom, true, true, `"level":"ERROR","msg":"scheduled run failed"`},
		{"no fire time is dropped, not retried", schedule.Event{}, nil, false, false, `"level":"ERROR","msg":"scheduled event refused"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			ran := false
			h := schedule.Handler(jobFunc(func(_ context.Context, ev schedule.Event) error {
				ran = true
				return tc.jobErr
			}), slog.New(slog.NewJSONHandler(&buf, nil)))
			err := h(context.Background(), tc.ev)
			if (err != nil) != tc.wantErr || (tc.wantErr && !errors.Is(err, boom)) {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if ran != tc.wantRun {
				t.Fatalf("ran = %v, want %v", ran, tc.wantRun)
			}
			if !strings.Contains(buf.String(), tc.wantLog) {
				t.Fatalf("log %q lacks %q", buf.String(), tc.wantLog)
			}
		})
	}
}
