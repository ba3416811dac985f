package nucleus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
	"github.com/dynastack/dynastack/lambdas/services/nucleus/cron"
)

// DefaultLookBack is how far back a run looks for fires: a fire is
// executed by the first successful run within this time, so this many
// minutes of failed or dropped runs lose nothing.
const DefaultLookBack = time.Hour

// ExecutorConfig configures NewExecutorFromConfig.
type ExecutorConfig struct {
	Tables Tables
	Client API
	Cloud  *Cloud
	// Act performs the starts and stops: services/nucleus/executor.Act,
	// with the EC2, RDS and ECS clients.
	Act Actuator
	// LookBack defaults to DefaultLookBack; it must be below
	// MarkerRetention.
	LookBack time.Duration
	Logger   *slog.Logger
	// Now and NewRunID default to time.Now and UUIDs; tests pin them.
	Now      func() time.Time
	NewRunID func() string
}

// Executor is the scheduled job that starts and stops the resources of
// enabled schedules (docs/schemas/nucleus.md, "Executor").
type Executor struct {
	store    *Store
	cloud    *Cloud
	act      Actuator
	lookBack time.Duration
	now      func() time.Time
	newRunID func() string
	log      *slog.Logger
}

// ResourceAction is one start or stop the executor asks its Actuator for, in the
// account's assumed role.
type ResourceAction struct {
	Cloud *Cloud
	Role  *Role
	// Type, Region and Resource (the ARN's resource part: instance/i-…,
	// db:…, cluster:…, service/<cluster>/<name>) name the resource.
	Type     ResourceType
	Region   string
	Resource string
	Start    bool
	// PreviousDesiredCount is the ECS desired count an earlier stop kept.
	PreviousDesiredCount *int32
}

// Outcome is what an action did: its audit entry's status and details
// (the call, the error as DescribeError gives it, what the call
// answered), and for an ECS stop the desired count to keep for the next
// start.
type Outcome struct {
	Status    AuditStatus
	Details   map[string]any
	KeepCount *int32
}

// Actuator performs one action. It never fails: whatever happens is the
// outcome the audit entry records. services/nucleus/executor.Act calls
// EC2, RDS and ECS; it is a package of its own so that the API's bootstrap
// links none of those clients.
type Actuator func(ctx context.Context, a ResourceAction) Outcome

// Failed is the outcome of an action that failed before or without a call.
func Failed(details map[string]any) Outcome {
	return Outcome{Status: StatusFail, Details: details}
}

// CallOutcome is the outcome of call: SUCCESS with details, or FAIL with
// the error added to them.
func CallOutcome(call string, err error, details map[string]any) Outcome {
	if details == nil {
		details = map[string]any{}
	}
	details["call"] = call
	if err != nil {
		details["error"] = DescribeError(err)
		return Outcome{Status: StatusFail, Details: details}
	}
	return Outcome{Status: StatusSuccess, Details: details}
}

// NewExecutor builds the executor from its function's environment, with
// act performing the actions: services/nucleus/executor.New, the
// constructor of the executor function, passes its Act.
func NewExecutor(ctx context.Context, getenv func(string) string, act Actuator, opts ...ddb.Option) (fn.Job, error) {
	fromEnv := func(getenv func(string) string) (ExecutorConfig, error) {
		cfg, err := ConfigFromEnv(getenv)
		if err != nil {
			return ExecutorConfig{}, err
		}
		ec := ExecutorConfig{Tables: cfg.Tables, Act: act}
		if v := getenv(contract.EnvLookBack); v != "" {
			if ec.LookBack, err = time.ParseDuration(v); err != nil {
				return ExecutorConfig{}, fmt.Errorf("nucleus: %s=%q: want a Go duration such as 1h: %w", contract.EnvLookBack, v, err)
			}
		}
		ec.Cloud, err = NewCloud(ctx, getenv)
		return ec, err
	}
	ec, err := fn.New(ctx, getenv, fromEnv, func(c *ExecutorConfig, client API) { c.Client = client }, fn.Same[ExecutorConfig], opts...)
	if err != nil {
		return nil, err
	}
	return NewExecutorFromConfig(ec)
}

// NewExecutorFromConfig builds the executor from cfg.
func NewExecutorFromConfig(cfg ExecutorConfig) (*Executor, error) {
	if cfg.Client == nil || cfg.Cloud == nil || cfg.Act == nil {
		return nil, errors.New("nucleus: executor needs a DynamoDB client, a Cloud and an Actuator (services/nucleus/executor.Act)")
	}
	if cfg.LookBack == 0 {
		cfg.LookBack = DefaultLookBack
	}
	if cfg.LookBack < time.Minute || cfg.LookBack >= MarkerRetention {
		return nil, fmt.Errorf("nucleus: look-back %v must be from 1m to below the markers' retention %v", cfg.LookBack, MarkerRetention)
	}
	x := &Executor{store: NewStore(cfg.Client, cfg.Tables, nil), cloud: cfg.Cloud, act: cfg.Act, lookBack: cfg.LookBack,
		now: time.Now, newRunID: uuid.NewString, log: cfg.Logger}
	if cfg.Now != nil {
		x.now, x.store.now = cfg.Now, cfg.Now
	}
	if cfg.NewRunID != nil {
		x.newRunID = cfg.NewRunID
	}
	if x.log == nil {
		x.log = slog.Default().With("service", contract.Executor.Name)
	}
	return x, nil
}

// due is one action a run executes.
type due struct {
	key  execKey
	name string // schedule name, for logs
}

// Run executes, for every enabled schedule, the latest fire of its
// start_cron or end_cron in (ev.ScheduledTime - look-back,
// ev.ScheduledTime] that no run has executed yet. It returns an error only
// when a retry can help (DynamoDB failed); a failed resource action is a
// FAIL entry, not an error.
func (x *Executor) Run(ctx context.Context, ev fn.ScheduleEvent) error {
	at := ev.ScheduledTime.UTC()
	schedules, err := x.store.enabledSchedules(ctx)
	if err != nil {
		return err
	}
	run := &execRun{x: x, id: x.newRunID(), roles: map[string]*accountRole{}}
	var errs []error
	for i := range schedules {
		d, ok := x.latestFire(&schedules[i], at)
		if !ok {
			continue
		}
		if err := run.execute(ctx, d); err != nil {
			errs = append(errs, fmt.Errorf("schedule %s %s at %s: %w", d.key.ScheduleID, d.key.Operation, d.key.FireTime.Format(time.RFC3339), err))
		}
	}
	return errors.Join(errs...)
}

// latestFire picks the action a schedule is due for at `at`: the latest
// fire of either cron in the window, unless a later fire (up to the clock)
// supersedes it. The window starts no earlier than the schedule's last
// change of timing, so creating, enabling or re-timing a schedule never
// replays a fire from before it, and a rename never loses a fire due but
// not yet executed.
func (x *Executor) latestFire(it *scheduleItem, at time.Time) (due, bool) {
	sc := it.schedule()
	loc, err := time.LoadLocation(sc.Timezone)
	if err != nil {
		x.log.Error("schedule skipped: time zone", "schedule_id", sc.ScheduleID, "timezone", sc.Timezone, "error", err.Error())
		return due{}, false
	}
	from := at.Add(-x.lookBack)
	if changed, err := ddb.ParseSortableTime(it.timingChangedAt()); err == nil && changed.After(from) {
		from = changed
	}
	var best due
	found := false
	now := x.now().UTC()
	for _, c := range []struct {
		op   Operation
		expr string
	}{{OperationStart, sc.StartCron}, {OperationStop, sc.EndCron}} {
		compiled, err := cron.Parse(c.expr)
		if err != nil {
			x.log.Error("schedule skipped: cron", "schedule_id", sc.ScheduleID, "cron", c.expr, "error", err.Error())
			return due{}, false
		}
		fires := compiled.Fires(loc, from, at)
		if later := compiled.Fires(loc, at, now); len(later) > 0 {
			// A newer action of this cron is due already; its run decides.
			fires = append(fires, later[len(later)-1])
		}
		if len(fires) == 0 {
			continue
		}
		t := fires[len(fires)-1]
		// At the same instant, stop wins: a stopped resource costs nothing.
		if !found || t.After(best.key.FireTime) || t.Equal(best.key.FireTime) && c.op == OperationStop {
			best, found = due{key: execKey{ScheduleID: sc.ScheduleID, Operation: c.op, FireTime: t}, name: sc.ScheduleName}, true
		}
	}
	if !found || best.key.FireTime.After(at) {
		return due{}, false
	}
	return best, true
}

// firedSince reports whether either cron of sc fired in (after, now]. It is
// false when they cannot be evaluated: latestFire, which logs why, has
// skipped such a schedule before.
func firedSince(sc *Schedule, after, now time.Time) bool {
	loc, err := time.LoadLocation(sc.Timezone)
	if err != nil {
		return false
	}
	for _, expr := range []string{sc.StartCron, sc.EndCron} {
		if c, err := cron.Parse(expr); err == nil && len(c.Fires(loc, after, now)) > 0 {
			return true
		}
	}
	return false
}

// execRun is one invocation: its claim owner id and the roles it assumed.
type execRun struct {
	x     *Executor
	id    string
	roles map[string]*accountRole
}

type accountRole struct {
	role *Role
	// fail is why the account's resources are not acted on.
	fail *Outcome
}

// execute runs one due action exactly once across runs: claim, read the
// schedule and its resources, act on each resource and record it with its
// marker, finish the claim.
func (r *execRun) execute(ctx context.Context, d due) error {
	x, k := r.x, d.key
	log := x.log.With("schedule_id", k.ScheduleID, "operation", k.Operation, "fire_time", k.FireTime.Format(time.RFC3339), "run", r.id)
	now := x.now()
	if c, err := x.store.peekClaim(ctx, k); err != nil {
		return err
	} else if c != nil && (c.State == markerDone || c.LeaseUntil >= now.Unix()) {
		return nil
	}
	takeover, err := x.store.claim(ctx, k, r.id, now)
	if errors.Is(err, errClaimed) {
		log.Info("execution claimed by another run")
		return nil
	}
	if err != nil {
		return err
	}
	summary, err := r.act(ctx, d, takeover, log)
	if err != nil {
		// Hand the claim back so that a retry need not wait for the lease.
		if rerr := x.store.finish(ctx, k, r.id, x.now(), claimItem{}, true); rerr != nil {
			log.Error("claim not released", "error", rerr.Error())
		}
		return err
	}
	if err := x.store.finish(ctx, k, r.id, x.now(), summary, false); err != nil {
		return err
	}
	log.Info("execution done", "resources", summary.Resources, "failed", summary.Failed, "note", summary.Note)
	return nil
}

func (r *execRun) act(ctx context.Context, d due, takeover bool, log *slog.Logger) (claimItem, error) {
	x, k := r.x, d.key
	it, resources, err := x.store.scheduleWithResources(ctx, k.ScheduleID)
	if errors.Is(err, ErrScheduleNotFound) {
		return claimItem{Note: "schedule deleted"}, nil
	}
	if err != nil {
		return claimItem{}, err
	}
	// The index the run listed from lags; the table is the truth.
	if !it.Enabled {
		return claimItem{Note: "schedule disabled"}, nil
	}
	if again, ok := x.latestFire(it, k.FireTime); !ok || !again.key.same(k) {
		return claimItem{Note: "schedule changed"}, nil
	}
	done := map[string]bool{}
	if takeover {
		if done, err = x.store.recordedResources(ctx, k); err != nil {
			return claimItem{}, err
		}
	}
	var sum claimItem
	for i := range resources {
		res := &resources[i]
		if done[res.arn()] {
			continue
		}
		// The action holds until either cron fires again. A run still
		// going then (slow calls, the next cron minutes later) leaves the
		// resources it has not reached to the newer action's run, which
		// acts on them: acting now could start what that run has just
		// stopped.
		if firedSince(it.schedule(), k.FireTime, x.now()) {
			sum.Note = "superseded by a newer fire"
			log.Warn("a newer fire is due; the resources not reached are left to its run", "resources_left", len(resources)-i)
			break
		}
		out := r.resourceAction(ctx, k, res)
		details := map[string]any{"operation": k.Operation, "fire_time": k.FireTime.Format(time.RFC3339),
			"resource_arn": res.arn(), "resource_type": res.ResourceType, "region": res.Region, "account_id": res.AccountID}
		for key, v := range out.Details {
			details[key] = v
		}
		err := x.store.recordAction(ctx, k, res, out.Status, details, out.KeepCount)
		switch {
		case errors.Is(err, errActionRecorded):
			log.Warn("resource action recorded by another run", "resource_arn", res.arn())
			continue
		case err != nil:
			return claimItem{}, err
		}
		sum.Resources++
		outcome := contract.OutcomeSucceeded
		if out.Status == StatusFail {
			sum.Failed++
			outcome = contract.OutcomeFailed
			log.Warn("resource action failed", "resource_arn", res.arn(), "details", details)
		}
		metrics.Count(ctx, x.log, contract.ResourceActions, string(res.ResourceType), outcome)
	}
	return sum, nil
}

// role assumes an account's role once per run; a missing or inactive
// account, or a refused AssumeRole, fails each of its resources.
func (r *execRun) role(ctx context.Context, accountID string) *accountRole {
	if ar, ok := r.roles[accountID]; ok {
		return ar
	}
	ar := &accountRole{}
	r.roles[accountID] = ar
	acct, err := r.x.store.accountItem(ctx, accountID)
	switch {
	case errors.Is(err, ErrAccountNotFound):
		f := Failed(map[string]any{"error": AWSError{Code: "AccountNotRegistered", Message: "account " + accountID + " is not registered"}})
		ar.fail = &f
	case err != nil:
		f := Failed(map[string]any{"error": AWSError{Code: "AccountRead", Message: err.Error()}})
		ar.fail = &f
	case acct.Status != AccountActive:
		f := Failed(map[string]any{"error": AWSError{Code: "AccountInactive", Message: "account " + accountID + " is " + string(acct.Status) + "; the executor acts only in active accounts"}})
		ar.fail = &f
	default:
		role, err := r.x.cloud.Assume(ctx, acct.RoleARN, acct.ExternalID, contract.ExecutorName)
		if err != nil {
			f := Failed(map[string]any{"role_arn": acct.RoleARN, "call": "sts:AssumeRole", "error": DescribeError(err)})
			ar.fail = &f
		} else {
			ar.role = role
		}
	}
	return ar
}

// resourceAction performs one start or stop. It never returns an error:
// whatever happens is the outcome the audit entry records.
func (r *execRun) resourceAction(ctx context.Context, k execKey, res *resourceItem) Outcome {
	ar := r.role(ctx, res.AccountID)
	if ar.fail != nil {
		return *ar.fail
	}
	m := resourceARNPattern().FindStringSubmatch(res.arn())
	if m == nil {
		return Failed(map[string]any{"error": AWSError{Code: "InvalidArn", Message: "not an ARN"}})
	}
	out := r.x.act(ctx, ResourceAction{Cloud: r.x.cloud, Role: ar.role, Type: res.ResourceType, Region: res.Region, Resource: m[5],
		Start: k.Operation == OperationStart, PreviousDesiredCount: res.PreviousDesiredCount})
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	out.Details["assumed_role"] = ar.role.AssumedRoleARN
	return out
}
