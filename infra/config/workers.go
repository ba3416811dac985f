package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/dynastack/dynastack/infra/secretscan"
)

// Schedule is when an EventBridge Scheduler schedule invokes a worker.
type Schedule struct {
	// Expression is a schedule expression as EventBridge Scheduler takes
	// it: "rate(5 minutes)" or "cron(0 9 * * ? *)".
	//
	// Required.
	Expression string
	// TimeZone is the IANA zone a cron expression is read in, so a 09:00
	// schedule stays at 09:00 local time across daylight saving changes.
	//
	// Default: "UTC".
	TimeZone string
}

var (
	rateExpr = regexp.MustCompile(`^rate\([1-9][0-9]* (minute|minutes|hour|hours|day|days)\)$`)
	cronExpr = regexp.MustCompile(`^cron\(\S+ \S+ \S+ \S+ \S+ \S+\)$`)
)

// Validate names the value and the fix of a malformed schedule.
func (s Schedule) Validate() error {
	if !rateExpr.MatchString(s.Expression) && !cronExpr.MatchString(s.Expression) {
		return fmt.Errorf("schedule expression %q: use rate(<n> minute[s]|hour[s]|day[s]) or cron(<6 fields>), e.g. rate(5 minutes)", s.Expression)
	}
	if s.TimeZone != "" {
		if _, err := time.LoadLocation(s.TimeZone); err != nil || s.TimeZone == "Local" {
			return fmt.Errorf("schedule time zone %q: use an IANA name such as Europe/Berlin, or leave it empty for UTC", s.TimeZone)
		}
	}
	return nil
}

// Zone is the schedule's time zone with its default applied.
func (s Schedule) Zone() string {
	if s.TimeZone == "" {
		return "UTC"
	}
	return s.TimeZone
}

// Limits of the rez_agent pipeline settings.
const (
	// MaxReceiveCountMax bounds redrive: past a few attempts a failing
	// notification is not going to succeed, and each attempt waits a
	// visibility timeout.
	MinReceiveCount = 1
	MaxReceiveCount = 20
	// SQS event source mapping limits for a standard queue.
	MinBatchSize      = 1
	MaxBatchSize      = 10
	MinMaxConcurrency = 2
	MaxMaxConcurrency = 1000
)

// RezAgentPipeline is the scheduler → SNS → SQS → processor → ntfy pipeline
// of rez_agent in one stage (docs/schemas/rezagent.md, "Pipeline").
type RezAgentPipeline struct {
	// Schedule of the scheduler function: one scheduled_hello per fire.
	//
	// Default: cron(0 9 * * ? *) in UTC (the document's "daily" hello).
	Schedule Schedule
	// NtfyURL is the ntfy server the processor publishes to (https only
	// outside a loopback address): its root URL, without user:password@
	// or a query (?auth=…), which would put a credential in the template.
	//
	// Default: "https://ntfy.sh".
	NtfyURL string
	// NtfyTopic is the topic every notification of the stage goes to. It
	// is no secret: it is committed here, copied into the template and
	// the processor's environment. Outside dev the topic is protected by
	// the access token of NtfyTokenParameter (the deploy preflight
	// requires it), never by being hard to guess.
	//
	// Default: "rez-agent-<stage>".
	NtfyTopic string
	// NtfyTokenParameter names an SSM SecureString parameter holding an
	// ntfy access token, read once per execution environment. The stack
	// grants ssm:GetParameter on it; the value never enters a template.
	// Required outside dev (Stage.DeployProblems): the token is what
	// protects the topic.
	//
	// Default: "" (publish without authentication; dev only).
	NtfyTokenParameter string
	// MaxReceiveCount is the queue's redrive maximum: a record received
	// this many times without success moves to the dead-letter queue, and
	// the processor's attempt with this receive count is the last (it
	// marks the message failed).
	//
	// Default: 5.
	MaxReceiveCount int
	// BatchSize of the processor's event source mapping.
	//
	// Default: 10.
	BatchSize int
	// MaxConcurrency caps concurrent processor invocations of the mapping,
	// which caps the request rate against the ntfy server.
	//
	// Default: 5.
	MaxConcurrency int
	// RepublishAfter is how long a message may stay created (stored, not
	// published) before a scheduler run publishes it again.
	//
	// Default: 5 minutes.
	RepublishAfter time.Duration
}

// Defaults of the rez_agent pipeline.
const (
	DefaultRezAgentSchedule = "cron(0 9 * * ? *)"
	DefaultNtfyURL          = "https://ntfy.sh"
	DefaultMaxReceiveCount  = 5
	DefaultBatchSize        = 10
	DefaultMaxConcurrency   = 5
	DefaultRepublishAfter   = 5 * time.Minute
)

var ntfyTopic = regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`)
var ssmName = regexp.MustCompile(`^/[a-zA-Z0-9_.\-/]+$`)

// WithDefaults returns p with every unset field defaulted for stage.
func (p RezAgentPipeline) WithDefaults(stage string) RezAgentPipeline {
	if p.Schedule.Expression == "" {
		p.Schedule.Expression = DefaultRezAgentSchedule
	}
	if p.NtfyURL == "" {
		p.NtfyURL = DefaultNtfyURL
	}
	if p.NtfyTopic == "" {
		p.NtfyTopic = "rez-agent-" + stage
	}
	if p.MaxReceiveCount == 0 {
		p.MaxReceiveCount = DefaultMaxReceiveCount
	}
	if p.BatchSize == 0 {
		p.BatchSize = DefaultBatchSize
	}
	if p.MaxConcurrency == 0 {
		p.MaxConcurrency = DefaultMaxConcurrency
	}
	if p.RepublishAfter == 0 {
		p.RepublishAfter = DefaultRepublishAfter
	}
	return p
}

// Validate names the value and the fix of every bad setting (defaults
// applied first).
func (p RezAgentPipeline) Validate() error {
	if err := p.Schedule.Validate(); err != nil {
		return fmt.Errorf("RezAgent.Schedule: %w", err)
	}
	if why := secretscan.URL(p.NtfyURL); why != "" {
		return fmt.Errorf("RezAgent.NtfyURL (%s) carries a credential, %s; the value is not repeated here: use the server's bare https:// root URL, and give the access token as an SSM SecureString named by RezAgent.NtfyTokenParameter", secretscan.Redact(p.NtfyURL), why)
	}
	u, err := url.Parse(p.NtfyURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("RezAgent.NtfyURL %q: use the server's https:// root URL, e.g. https://ntfy.sh (plain http only for a loopback address)", p.NtfyURL)
	}
	if !ntfyTopic.MatchString(p.NtfyTopic) {
		return fmt.Errorf("RezAgent.NtfyTopic %q: use 1-64 letters, digits, - or _ (ntfy's topic rule)", p.NtfyTopic)
	}
	if p.NtfyTokenParameter != "" && (!ssmName.MatchString(p.NtfyTokenParameter) || len(p.NtfyTokenParameter) > 1011) {
		return fmt.Errorf("RezAgent.NtfyTokenParameter %q: use a fully qualified SSM parameter name such as /rez-agent/prod/ntfy-token", p.NtfyTokenParameter)
	}
	if p.MaxReceiveCount < MinReceiveCount || p.MaxReceiveCount > MaxReceiveCount {
		return fmt.Errorf("RezAgent.MaxReceiveCount %d: use %d to %d", p.MaxReceiveCount, MinReceiveCount, MaxReceiveCount)
	}
	if p.BatchSize < MinBatchSize || p.BatchSize > MaxBatchSize {
		return fmt.Errorf("RezAgent.BatchSize %d: use %d to %d (a larger batch needs a batching window, which delays notifications)", p.BatchSize, MinBatchSize, MaxBatchSize)
	}
	if p.MaxConcurrency < MinMaxConcurrency || p.MaxConcurrency > MaxMaxConcurrency {
		return fmt.Errorf("RezAgent.MaxConcurrency %d: use %d to %d (the SQS event source mapping's range)", p.MaxConcurrency, MinMaxConcurrency, MaxMaxConcurrency)
	}
	if p.RepublishAfter < time.Minute || p.RepublishAfter > 24*time.Hour {
		return fmt.Errorf("RezAgent.RepublishAfter %s: use 1m to 24h (shorter republishes messages whose first publish is still in flight)", p.RepublishAfter)
	}
	return nil
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
}
