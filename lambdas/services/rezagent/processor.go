package rezagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/ntfy"
)

// Processor limits.
const (
	// ProcessorParallel is how many records of a batch are delivered at
	// once: a batch of 10 then takes one ntfy round trip, not ten.
	ProcessorParallel = 10
	// defaultLease is the lease outside Lambda when the context carries
	// no deadline; in Lambda the lease ends at the invocation deadline.
	defaultLease = 30 * time.Second
	// maxNtfyMessageBytes: ntfy turns longer messages into attachments.
	maxNtfyMessageBytes = 4096
)

// Processor delivers queued messages to ntfy, one SQS record at a time,
// exactly once in effect: a record is claimed (a conditioned move to
// processing under a lease), delivered, and finished (completed with
// ntfy's id, or failed). Records of final messages are acknowledged
// without a delivery; a failed delivery is retried by SQS until the last
// attempt, which marks the message failed.
type Processor struct {
	store      *Store
	ntfy       *ntfy.Client
	topic      string
	maxReceive int
	log        *slog.Logger
}

// ProcessorConfig configures NewProcessorFromConfig.
type ProcessorConfig struct {
	Config
	Ntfy            *ntfy.Client
	NtfyTopic       string
	MaxReceiveCount int
}

// TokenReader reads the ntfy access token from the SSM parameter named
// name, with the AWS configuration getenv gives. processor.ReadToken
// (services/rezagent/processor) is the one the processor function uses:
// the SSM client lives there so that the API's and the scheduler's
// bootstraps do not link it (docs/functions.md, "Cold start").
type TokenReader func(ctx context.Context, getenv func(string) string, name string) (string, error)

// NewProcessor builds the processor from the environment; the ntfy token
// comes from SSM (NTFY_TOKEN_PARAMETER, read by readToken) or, locally,
// NTFY_TOKEN.
func NewProcessor(ctx context.Context, getenv func(string) string, readToken TokenReader, opts ...ddb.Option) (fn.QueueConsumer, error) {
	p, err := fn.New(ctx, getenv, func(getenv func(string) string) (ProcessorConfig, error) {
		return processorConfigFromEnv(ctx, getenv, readToken)
	}, (*ProcessorConfig).SetClient, NewProcessorFromConfig, opts...)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// processorConfigFromEnv reads the processor's configuration (not the
// DynamoDB client) from getenv.
func processorConfigFromEnv(ctx context.Context, getenv func(string) string, readToken TokenReader) (ProcessorConfig, error) {
	cfg, err := ConfigFromEnv(getenv)
	if err != nil {
		return ProcessorConfig{}, err
	}
	pc := ProcessorConfig{Config: cfg, NtfyTopic: getenv(contract.EnvNtfyTopic)}
	server := getenv(contract.EnvNtfyURL)
	if server == "" || pc.NtfyTopic == "" {
		return ProcessorConfig{}, fmt.Errorf("rezagent: %s and %s must be set: the ntfy server and topic notifications go to", contract.EnvNtfyURL, contract.EnvNtfyTopic)
	}
	if pc.MaxReceiveCount, err = strconv.Atoi(getenv(contract.EnvMaxReceiveCount)); err != nil || pc.MaxReceiveCount < 1 {
		return ProcessorConfig{}, fmt.Errorf("rezagent: %s is %q; want the queue's maxReceiveCount (a positive integer)", contract.EnvMaxReceiveCount, getenv(contract.EnvMaxReceiveCount))
	}
	token := getenv(contract.EnvNtfyToken)
	if name := getenv(contract.EnvNtfyTokenParameter); name != "" {
		if readToken == nil {
			return ProcessorConfig{}, fmt.Errorf("rezagent: %s=%s needs a TokenReader (services/rezagent/processor.ReadToken)", contract.EnvNtfyTokenParameter, name)
		}
		if token, err = readToken(ctx, getenv, name); err != nil {
			return ProcessorConfig{}, err
		}
	}
	pc.Ntfy = &ntfy.Client{Server: server, Token: token, HTTP: &http.Client{}}
	if v := getenv(contract.EnvNtfyTimeout); v != "" {
		if pc.Ntfy.Timeout, err = time.ParseDuration(v); err != nil || pc.Ntfy.Timeout <= 0 {
			return ProcessorConfig{}, fmt.Errorf("rezagent: %s is %q; want a positive Go duration such as 10s", contract.EnvNtfyTimeout, v)
		}
	}
	return pc, nil
}

// NewProcessorFromConfig builds the processor from cfg.
func NewProcessorFromConfig(cfg ProcessorConfig) *Processor {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Processor{store: storeFromConfig(cfg.Config), ntfy: cfg.Ntfy, topic: cfg.NtfyTopic, maxReceive: cfg.MaxReceiveCount, log: log}
}

// Handle processes a batch, reporting the records SQS should deliver again.
func (p *Processor) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return fn.QueueBatch(ctx, ev, ProcessorParallel, p.Record), nil
}

// Record processes one SQS record.
func (p *Processor) Record(ctx context.Context, rec events.SQSMessage) fn.Outcome {
	receives := fn.ReceiveCount(rec)
	log := p.log.With("sqs_message_id", rec.MessageId, "receive_count", receives)
	// Every line about the record carries the message's correlation id:
	// from the record's attribute at once, from the message once claimed
	// (the table is the truth; a record published before the attribute
	// existed has none).
	if a, ok := rec.MessageAttributes[contract.AttrCorrelationID]; ok && a.StringValue != nil && ids.ValidID(*a.StringValue) {
		ctx = logx.WithCorrelationID(ctx, *a.StringValue)
	}
	id, err := parseNotice(rec.Body)
	if err != nil {
		// Redelivery cannot repair it: it reaches the dead-letter queue
		// after maxReceiveCount receives, without holding up the batch.
		log.ErrorContext(ctx, "poison record", "error", err.Error(), "body", truncateBytes(rec.Body, 256))
		return fn.Retry
	}
	log = log.With("message_id", id)
	leaseUntil := time.Now().Add(defaultLease)
	if d, ok := ctx.Deadline(); ok {
		leaseUntil = d
	}
	// The token names the record and its receive, for the logs and the
	// check below, and is unique per handling: two copies of one record in
	// a batch must not read each other's claim as their own (Claim takes a
	// lease holding its own token for its answer, lost and retried).
	token := rec.MessageId + "/" + strconv.Itoa(receives) + "/" + uuid.NewString()
	m, err := p.store.Claim(ctx, id, token, leaseUntil)
	if m != nil && m.CorrelationID != "" && m.CorrelationID != logx.CorrelationID(ctx) {
		ctx = logx.WithCorrelationID(ctx, m.CorrelationID)
	}
	switch {
	case errors.Is(err, ErrBusy) && strings.HasPrefix(m.LeaseToken, rec.MessageId+"/"):
		// This very record, handed out again while an earlier receive
		// of it still runs (a visibility timeout shorter than the
		// function's): keep it, so its outcome is decided once.
		log.WarnContext(ctx, "record is still being processed by an earlier receive")
		return fn.Retry
	case errors.Is(err, ErrFinal), errors.Is(err, ErrBusy):
		log.InfoContext(ctx, "record acknowledged without delivery", "reason", err.Error())
		return fn.Done
	case errors.Is(err, ErrNotFound):
		log.ErrorContext(ctx, "poison record", "error", "no such live message")
		return fn.Retry
	case err != nil:
		log.ErrorContext(ctx, "claim failed", "error", err.Error())
		return fn.Retry
	}
	pub, err := p.ntfy.Publish(ctx, p.notification(m))
	if err == nil {
		if _, err := p.store.Finish(ctx, id, token, StatusChange{To: StatusCompleted, NotificationID: truncateRunes(pub.ID, MaxNotificationIDLen)}); err != nil {
			// Delivered but not recorded: the retry delivers again once
			// the lease ends (the one window for a second notification).
			log.ErrorContext(ctx, "delivered, but completing failed", "error", err.Error(), "notification_id", pub.ID)
			return fn.Retry
		}
		log.InfoContext(ctx, "delivered", "notification_id", pub.ID, "retry_count", m.RetryCount)
		metrics.Count(ctx, p.log, contract.Deliveries, m.MessageType, contract.OutcomeDelivered)
		return fn.Done
	}
	last := receives >= p.maxReceive || !ntfy.IsRetryable(err)
	if !last {
		log.WarnContext(ctx, "delivery failed; SQS retries", "error", err.Error(), "max_receive_count", p.maxReceive)
		metrics.Count(ctx, p.log, contract.Deliveries, m.MessageType, contract.OutcomeRetried)
		if err := p.store.Release(ctx, id, token); err != nil {
			log.WarnContext(ctx, "release failed; the retry waits for the lease to end", "error", err.Error())
		}
		return fn.Retry
	}
	msg := truncateRunes(err.Error(), MaxErrorMessageChars)
	if _, ferr := p.store.Finish(ctx, id, token, StatusChange{To: StatusFailed, ErrorMessage: msg}); ferr != nil {
		log.ErrorContext(ctx, "marking failed failed", "error", ferr.Error())
		return fn.Retry
	}
	log.ErrorContext(ctx, "delivery failed for good", "error", msg, "retryable", ntfy.IsRetryable(err))
	metrics.Count(ctx, p.log, contract.Deliveries, m.MessageType, contract.OutcomeFailedForGood)
	return fn.Done
}

// parseNotice decodes a record body strictly: one JSON object holding a
// canonical message id and nothing else.
func parseNotice(body string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	var n Notice
	if err := dec.Decode(&n); err != nil {
		return "", fmt.Errorf("body is not a notice: %w", err)
	}
	if dec.More() {
		return "", errors.New("body has data after the notice")
	}
	if !ids.CanonicalUUID(n.MessageID) {
		return "", fmt.Errorf("message_id %q is not a canonical UUID", truncateRunes(n.MessageID, 64))
	}
	return n.MessageID, nil
}

// notification maps a message to ntfy: the payload's text, title,
// priority, tags and click_url (document 000's payloads). A type without
// text sends its type and payload as JSON, so nothing is silently empty.
func (p *Processor) notification(m *Message) ntfy.Notification {
	n := ntfy.Notification{Topic: p.topic}
	if s, ok := m.Payload["text"].(string); ok && s != "" {
		n.Message = s
	} else {
		b, _ := json.Marshal(m.Payload)
		n.Message = m.MessageType + ": " + string(b)
	}
	n.Message = truncateBytes(n.Message, maxNtfyMessageBytes)
	if s, ok := m.Payload["title"].(string); ok {
		n.Title = s
	}
	if s, ok := m.Payload["priority"].(string); ok {
		n.Priority = ntfy.Priorities[s]
	}
	if tags, ok := m.Payload["tags"].([]any); ok {
		for _, t := range tags {
			if s, ok := t.(string); ok {
				n.Tags = append(n.Tags, s)
			}
		}
	}
	if s, ok := m.Payload["click_url"].(string); ok {
		n.Click = s
	}
	return n
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
