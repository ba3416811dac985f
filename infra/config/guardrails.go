package config

import (
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/secretscan"
)

// AlarmSubscribers are who the stage's alarms reach: every stack of the
// stage has an encrypted, TLS-only SNS topic that every one of its alarms
// notifies (on ALARM and back to OK), subscribed by these.
type AlarmSubscribers struct {
	// Emails each get an email subscription; SNS sends a confirmation
	// mail per topic, and nothing arrives until it is confirmed.
	//
	// Default: none.
	Emails []string
	// HTTPSEndpoints each get an HTTPS subscription (a chat or paging
	// webhook); plain http is refused, as the topic is TLS-only. Only
	// URLs that are no secret belong here: one carrying a credential
	// (user:password@, a token in its query, a Slack, Teams or PagerDuty
	// style hook whose path is its secret) is refused outside dev
	// (ValidateGuardrails), since a literal here is committed, copied into
	// the template and its golden file: use HTTPSEndpointSecrets.
	//
	// Default: none.
	HTTPSEndpoints []string
	// HTTPSEndpointSecrets each get an HTTPS subscription to the URL held
	// by a Secrets Manager secret of this name (or ARN), as its whole
	// SecretString. The template holds only the dynamic reference
	// {{resolve:secretsmanager:<name>:SecretString:::}}, which
	// CloudFormation resolves at deploy with the deployer's credentials
	// (secretsmanager:GetSecretValue); SNS keeps the resolved URL in the
	// subscription, visible to whoever may list the topic's subscriptions.
	//
	// Default: none.
	HTTPSEndpointSecrets []string
}

// secretName is a Secrets Manager secret's name or ARN.
var secretName = regexp.MustCompile(`^(arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:)?[A-Za-z0-9/_+=.@-]{1,512}$`)

// Validate names each malformed subscriber and its fix. An endpoint that
// carries a credential is shown redacted (scheme and host).
func (a AlarmSubscribers) Validate() error {
	var errs []error
	for _, e := range a.Emails {
		if addr, err := mail.ParseAddress(e); err != nil || addr.Address != e {
			errs = append(errs, fmt.Errorf("alarm email %q: write a bare address such as oncall@example.com", e))
		}
	}
	for i, u := range a.HTTPSEndpoints {
		if p, err := url.Parse(u); err != nil || p.Scheme != "https" || p.Host == "" {
			errs = append(errs, fmt.Errorf("alarm endpoint %s (Alarms.HTTPSEndpoints[%d]): use an https:// URL (the topic delivers over TLS only)", showURL(u), i))
		}
	}
	for i, n := range a.HTTPSEndpointSecrets {
		if !secretName.MatchString(n) {
			errs = append(errs, fmt.Errorf("Alarms.HTTPSEndpointSecrets[%d] %q: use the name (or ARN) of the Secrets Manager secret holding the webhook URL, e.g. dynastack/prod/alarm-webhook", i, n))
		}
	}
	return errors.Join(errs...)
}

// Empty reports whether nobody would hear an alarm.
func (a AlarmSubscribers) Empty() bool {
	return len(a.Emails)+len(a.HTTPSEndpoints)+len(a.HTTPSEndpointSecrets) == 0
}

// literalSecrets refuses every HTTPSEndpoints entry that carries a
// credential, naming the entry and why, never the value.
func (a AlarmSubscribers) literalSecrets(stage table.Stage) []error {
	var errs []error
	for i, u := range a.HTTPSEndpoints {
		if why := secretscan.URL(u); why != "" {
			errs = append(errs, fmt.Errorf("stage %s: Alarms.HTTPSEndpoints[%d] (%s) carries a credential, %s; the value is not repeated here. A literal in infra/config is committed, copied into the template (test/snapshots) and readable by everyone who reads either: store the URL as a Secrets Manager secret (aws secretsmanager create-secret --name dynastack/%s/alarm-webhook --secret-string <URL>) and name it in Alarms.HTTPSEndpointSecrets instead",
				stage, i, secretscan.Redact(u), why, stage))
		}
	}
	return errs
}

// showURL quotes a URL for a message, or shows it redacted when it
// carries a credential.
func showURL(u string) string {
	if secretscan.URL(u) != "" {
		return secretscan.Redact(u)
	}
	return strconv.Quote(u)
}

// Reserved concurrency per function, by the function's kind in its
// service contract unless the stage's ReservedConcurrency names the
// function. The numbers, per stage:
//
//   - an API function: 25. Its API admits 100 requests/s (burst 200); at
//     100 ms per request that is 10 executions, so 25 leave room for slow
//     moments while a flood beyond it is throttled at this function instead
//     of draining the account's pool.
//   - a stream consumer: 5, reserved so an API flood can never starve it
//     (one execution per stream shard; a table of this size has few).
//   - a queue consumer (rez_agent's processor): the pipeline's
//     MaxConcurrency (default 5), as its queue mapping never runs more.
//   - a scheduled job: 2 (one run per fire, one for an overlapping retry).
//   - a function of no known kind: DefaultReservedConcurrency.
//
// One stage reserves 7×25 + 5 + 5 + 4×2 = 193 (seven API functions:
// AgenticPM's API is three); three stages in one account 579 of Lambda's
// default 1000, leaving 421 unreserved (Lambda requires at
// least 100). An account still at a new account's lower quota cannot
// deploy reservations: raise the quota, or set the stage's
// ReservedConcurrency entries to 0 (unreserved).
const (
	APIReservedConcurrency       = 25
	StreamReservedConcurrency    = 5
	ScheduledReservedConcurrency = 2
	DefaultReservedConcurrency   = 5
	// AccountConcurrency is Lambda's default concurrency quota per account
	// and region, and UnreservedFloor what Lambda keeps unreserved.
	AccountConcurrency = 1000
	UnreservedFloor    = 100
)

var reservedByKind = map[service.Kind]int{
	service.HTTP:     APIReservedConcurrency,
	service.Stream:   StreamReservedConcurrency,
	service.Queue:    DefaultMaxConcurrency,
	service.Schedule: ScheduledReservedConcurrency,
}

// Concurrency is the reserved concurrency of fn: the stage's
// ReservedConcurrency entry for its name, else its kind's default above.
// 0 means unreserved.
func (s Stage) Concurrency(fn service.Function) int {
	if n, ok := s.ReservedConcurrency[fn.Name]; ok {
		return n
	}
	if n, ok := reservedByKind[fn.Kind]; ok {
		return n
	}
	return DefaultReservedConcurrency
}

// ReservedTotal is what every function of every service contract reserves
// in the stage.
func (s Stage) ReservedTotal() int {
	total := 0
	for _, fn := range catalog.Functions() {
		total += s.Concurrency(fn)
	}
	return total
}

// ValidateGuardrails checks the stage's alarm subscribers, reserved
// concurrency, table-name overrides, backup plan and service placements:
// a deployed stage (stage, prod) must reach someone, and none of its alarm
// endpoints may be a literal that carries a credential
// (HTTPSEndpointSecrets is the way for those).
func (s Stage) ValidateGuardrails() error {
	var errs []error
	if err := s.Alarms.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("stage %s: %w", s.Name, err))
	}
	if s.Name != table.Dev && s.Alarms.Empty() {
		errs = append(errs, fmt.Errorf("stage %s: Alarms has no subscriber, so its alarms would notify nobody: add an email or an https endpoint in infra/config", s.Name))
	}
	if s.Name != table.Dev {
		errs = append(errs, s.Alarms.literalSecrets(s.Name)...)
	}
	for _, k := range slices.Sorted(maps.Keys(s.ReservedConcurrency)) {
		if n := s.ReservedConcurrency[k]; n < 0 || n > AccountConcurrency-UnreservedFloor {
			errs = append(errs, fmt.Errorf("stage %s: ReservedConcurrency[%q]=%d: use 1 to %d, or 0 for unreserved", s.Name, k, n, AccountConcurrency-UnreservedFloor))
		}
		if _, ok := catalog.Function(k); !ok {
			errs = append(errs, fmt.Errorf("stage %s: ReservedConcurrency key %q: use a function's name from its service contract, one of %s", s.Name, k, strings.Join(functionNames(), ", ")))
		}
	}
	errs = append(errs, s.validateTableNames()...)
	errs = append(errs, s.validateBackup()...)
	errs = append(errs, s.validatePlacements()...)
	errs = append(errs, s.validateRollout()...)
	return errors.Join(errs...)
}

// tableNamePattern is DynamoDB's rule for table names (3 to 255 of these).
var tableNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

// validateTableNames checks each TableNames entry: a key of a known
// service, a name DynamoDB accepts, and no name given to two tables. That
// the key's construct id is a table of its service is checked where the
// stacks are built (stacks.NewStage), which knows the ids.
func (s Stage) validateTableNames() []error {
	var errs []error
	services := serviceNames()
	owner := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(s.TableNames)) {
		name := s.TableNames[k]
		svc, id, ok := strings.Cut(k, "/")
		if !ok || id == "" || !slices.Contains(services, svc) {
			errs = append(errs, fmt.Errorf("stage %s: TableNames key %q: write service/construct id (config.TableKey), e.g. \"itsm/Tickets\"; services: %s", s.Name, k, strings.Join(services, ", ")))
			continue
		}
		if !tableNamePattern.MatchString(name) {
			errs = append(errs, fmt.Errorf("stage %s: TableNames[%q] = %q: use the live table's exact name, 3 to 255 of a-z, A-Z, 0-9, '_', '-', '.'", s.Name, k, name))
			continue
		}
		if other, dup := owner[name]; dup {
			errs = append(errs, fmt.Errorf("stage %s: TableNames[%q] and TableNames[%q] both name %q: one live table can back one table only", s.Name, other, k, name))
			continue
		}
		owner[name] = k
	}
	return errs
}

func serviceNames() []string {
	var names []string
	for _, c := range catalog.Services() {
		names = append(names, c.Name)
	}
	return names
}

func functionNames() []string {
	var names []string
	for _, fn := range catalog.Functions() {
		names = append(names, fn.Name)
	}
	return names
}
