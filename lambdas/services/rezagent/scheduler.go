package rezagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Scheduler settings.
const (
	// ScheduledType and ScheduledBy mark the scheduler's messages.
	ScheduledType = contract.TypeScheduledHello
	ScheduledBy   = "scheduler"
	// DefaultRepublishAfter is used when contract.EnvRepublishAfter is unset.
	DefaultRepublishAfter = 5 * time.Minute
	// MaxRepublish bounds the stranded messages one run republishes, so a
	// long SNS outage drains over a few runs instead of one long one.
	MaxRepublish = 100
)

// scheduledNamespace makes scheduled message ids: UUID v5 of the schedule
// ARN and the fire time, so every retry of one fire names one message.
var scheduledNamespace = uuid.MustParse("6f0c2f64-5b0e-4d0b-9a51-2f3b8c1de0a7")

// ScheduledMessageID is the id of the message a schedule creates for one
// fire time.
func ScheduledMessageID(scheduleARN string, at time.Time) string {
	return uuid.NewSHA1(scheduledNamespace, []byte(scheduleARN+"\n"+at.UTC().Format(time.RFC3339))).String()
}

// HelloPayload is the payload of every scheduled_hello (document 000).
func HelloPayload() Payload {
	return Payload{"text": "hello world", "priority": "default", "tags": []any{"scheduled", "daily"}}
}

// Scheduler is the scheduled job of rez_agent: each fire creates one
// scheduled_hello and publishes it, then republishes stranded messages.
type Scheduler struct {
	store          *Store
	pub            *Publisher
	republishAfter time.Duration
	log            *slog.Logger
}

// SchedulerConfig configures NewSchedulerFromConfig.
type SchedulerConfig struct {
	Config
	SNS            SNSAPI
	Topic          string
	RepublishAfter time.Duration
}

// NewScheduler builds the scheduler from the environment, with newSNS
// making the SNS client it publishes with: publisher.NewScheduler, the
// constructor of the scheduler function, passes publisher.NewSNS.
func NewScheduler(ctx context.Context, getenv func(string) string, newSNS SNSConstructor, opts ...ddb.Option) (fn.Job, error) {
	fromEnv := func(getenv func(string) string) (SchedulerConfig, error) {
		cfg, err := ConfigFromEnv(getenv)
		if err != nil {
			return SchedulerConfig{}, err
		}
		sc := SchedulerConfig{Config: cfg, Topic: getenv(contract.EnvTopicArn), RepublishAfter: DefaultRepublishAfter}
		if sc.Topic == "" {
			return SchedulerConfig{}, fmt.Errorf("rezagent: %s is not set; it names the topic scheduled messages are published to", contract.EnvTopicArn)
		}
		if v := getenv(contract.EnvRepublishAfter); v != "" {
			if sc.RepublishAfter, err = time.ParseDuration(v); err != nil || sc.RepublishAfter <= 0 {
				return SchedulerConfig{}, fmt.Errorf("rezagent: %s is %q; want a positive Go duration such as 5m", contract.EnvRepublishAfter, v)
			}
		}
		sc.SNS, err = newSNS(ctx, getenv)
		return sc, err
	}
	sc, err := fn.New(ctx, getenv, fromEnv, (*SchedulerConfig).SetClient, NewSchedulerFromConfig, opts...)
	if err != nil {
		return nil, err
	}
	return sc, nil
}

// NewSchedulerFromConfig builds the scheduler from cfg.
func NewSchedulerFromConfig(cfg SchedulerConfig) *Scheduler {
	store := storeFromConfig(cfg.Config)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Scheduler{store: store, pub: NewPublisher(cfg.SNS, cfg.Topic, store), republishAfter: cfg.RepublishAfter, log: log}
}

// Run creates the fire's message (once, however often the fire is
// retried), publishes it while it is still created, and republishes
// messages stranded in created. An error asks for a retry.
func (s *Scheduler) Run(ctx context.Context, ev fn.ScheduleEvent) error {
	if err := ev.Validate(); err != nil {
		return err
	}
	id := ScheduledMessageID(ev.ScheduleARN, ev.ScheduledTime)
	// The fire's message is correlated by its own id, which every retry
	// of the fire derives again.
	mctx := logx.WithCorrelationID(ctx, id)
	m, created, err := s.store.CreateWithID(mctx, id, NewMessage{
		MessageType: ScheduledType, CreatedBy: ScheduledBy, Payload: HelloPayload(), CorrelationID: id,
	})
	if err != nil {
		return err
	}
	var errs []error
	if m.Status == StatusCreated {
		if _, err := s.pub.Publish(mctx, m); err != nil {
			errs = append(errs, err)
		}
	}
	s.log.InfoContext(mctx, "scheduled message", "message_id", id, "created", created, "status", m.Status)
	n, err := s.Republish(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	if n > 0 {
		s.log.InfoContext(ctx, "republished stranded messages", "count", n)
	}
	return errors.Join(errs...)
}

// Republish publishes again up to MaxRepublish messages that have been
// created for longer than the republish threshold, and reports how many
// it published. A publish failure stops the run (SNS is likely down).
func (s *Scheduler) Republish(ctx context.Context) (int, error) {
	stranded, err := s.store.Stranded(ctx, s.store.now().Add(-s.republishAfter), MaxRepublish)
	if err != nil {
		return 0, err
	}
	for i, sum := range stranded {
		mctx := logx.WithCorrelationID(ctx, sum.CorrelationID)
		if _, err := s.pub.Publish(mctx, &Message{Summary: sum}); err != nil {
			s.log.WarnContext(mctx, "republish failed", "message_id", sum.MessageID, "error", err.Error())
			return i, err
		}
		s.log.InfoContext(mctx, "republished stranded message", "message_id", sum.MessageID, "created_date", sum.CreatedDate)
	}
	return len(stranded), nil
}
