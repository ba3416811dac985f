// Scheduled functions: the contract between an EventBridge Scheduler
// schedule and the Go function it invokes. The stacks give every schedule
// the target input Input, in which EventBridge Scheduler replaces the
// context attributes, so a job learns which fire time it serves. A job
// derives the identity of the work it does from that time (not from the
// clock), which is what makes a retried or overlapping invocation for one
// fire time do the work once.
//
// Delivery is at least once: Scheduler retries a failed invocation (its
// RetryPolicy), and Lambda itself retries an asynchronous invocation that
// returned an error. A job returns an error only when a retry can help.

package fn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// ScheduleEvent is one invocation of a scheduled function.
type ScheduleEvent struct {
	// ScheduleARN names the schedule that fired.
	ScheduleARN string `json:"schedule_arn"`
	// ScheduledTime is the fire time this invocation serves (second
	// precision, UTC). Every retry of one fire carries the same value.
	ScheduledTime time.Time `json:"scheduled_time"`
	// ExecutionID differs per attempt; log it, never key work on it.
	ExecutionID string `json:"execution_id"`
	// AttemptNumber counts Scheduler's attempts from 1.
	AttemptNumber int `json:"attempt_number,string"`
}

// ErrNoScheduledTime: the event does not say which fire time it serves,
// so the job cannot tell a retry from a new run and refuses to act.
var ErrNoScheduledTime = errors.New("schedule: event has no scheduled_time")

// Validate reports whether ev can be acted on.
func (ev ScheduleEvent) Validate() error {
	if ev.ScheduledTime.IsZero() {
		return ErrNoScheduledTime
	}
	return nil
}

// Job is what a scheduled function builds once per execution environment.
type Job interface {
	Run(ctx context.Context, ev ScheduleEvent) error
}

// JobConstructor builds a job from its function's environment, like a service
// constructor.
type JobConstructor func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (Job, error)

// JobHandler adapts job to a Lambda handler: it refuses an event without a
// fire time and logs the outcome of each run at the right level.
func JobHandler(job Job, log *slog.Logger) func(context.Context, ScheduleEvent) error {
	return func(ctx context.Context, ev ScheduleEvent) error {
		if err := ev.Validate(); err != nil {
			// Retrying cannot add the attribute: drop it loudly.
			log.ErrorContext(ctx, "scheduled event refused", "error", err.Error(), "execution_id", ev.ExecutionID)
			return nil
		}
		start := time.Now()
		err := job.Run(ctx, ev)
		attrs := []any{"scheduled_time", ev.ScheduledTime.UTC().Format(time.RFC3339), "execution_id", ev.ExecutionID,
			"attempt", ev.AttemptNumber, "duration_ms", time.Since(start).Milliseconds()}
		if err != nil {
			log.ErrorContext(ctx, "scheduled run failed", append(attrs, "error", err.Error())...)
			return fmt.Errorf("scheduled run for %s: %w", ev.ScheduledTime.UTC().Format(time.RFC3339), err)
		}
		log.InfoContext(ctx, "scheduled run done", attrs...)
		return nil
	}
}
