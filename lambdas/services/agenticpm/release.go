package agenticpm

import (
	"context"
	"errors"
	"log/slog"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
)

// ReleaseJob is the service's scheduled worker: each run releases the
// held actions due by then, sends the events the outbox still holds, and
// expires the escalations past their deadline (docs/schemas/agenticpm.md,
// "Release job"). Expiry joined the release job rather than a function of
// its own: both are deadlines judged by the clock at the run, made exactly
// once by a conditional transaction, and need the same grant (Query on
// GSI1, a transaction of an Update and two Puts), schedule and alarms.
type ReleaseJob struct {
	store *Store
	log   *slog.Logger
}

var _ fn.Job = (*ReleaseJob)(nil)

// NewReleaseJobFromConfig builds the job from cfg (Client required; Events
// and EventBus to send; Now and Logger optional). The function's
// constructor, eventbus.NewReleaseJob, reads cfg from its environment.
func NewReleaseJobFromConfig(cfg Config) *ReleaseJob {
	if cfg.Client == nil {
		panic("agenticpm: Config.Client is nil")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default().With("service", contract.Release.Name)
	}
	return &ReleaseJob{store: storeFromConfig(cfg, log), log: log}
}

// Run releases what is due now. The fire time only names the run in the
// logs: due is judged by the clock, so a late or retried run releases what
// is due when it runs, and the release transaction keeps an action from
// being released twice however runs overlap.
//
// The two halves are independent: a failing release (the bus down) does
// not hold up expiries, and the run's error joins both.
func (j *ReleaseJob) Run(ctx context.Context, ev fn.ScheduleEvent) error {
	rep, err := j.store.ReleaseDue(ctx)
	j.log.InfoContext(ctx, "hold queue run", "scheduled_time", ev.ScheduledTime, "due", rep.Due, "released", rep.Released,
		"outbox", rep.Outbox, "sent", rep.Sent)
	metrics.Emit(ctx, j.log, contract.Releases, float64(rep.Released))
	metrics.Emit(ctx, j.log, contract.OverdueHeldActions, float64(rep.Overdue))
	exp, xerr := j.store.ExpireOverdue(ctx)
	j.log.InfoContext(ctx, "escalation expiry run", "scheduled_time", ev.ScheduledTime, "overdue", exp.Overdue, "expired", exp.Expired)
	metrics.Emit(ctx, j.log, contract.EscalationsClosed, float64(exp.Expired), contract.OutcomeExpired)
	return errors.Join(err, xerr)
}

// RunOnce is one run's release half without an event, returning what it
// did.
func (j *ReleaseJob) RunOnce(ctx context.Context) (*ReleaseReport, error) {
	return j.store.ReleaseDue(ctx)
}

// ExpireOnce is one run's expiry half, returning what it did.
func (j *ReleaseJob) ExpireOnce(ctx context.Context) (*ExpiryReport, error) {
	return j.store.ExpireOverdue(ctx)
}
