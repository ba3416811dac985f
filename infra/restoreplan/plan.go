// Package restoreplan prints the commands of a point-in-time restore of
// one table of one stage (docs/restoring.md, make restore-plan): restore to
// a new table, prepare and compare it (make adopt), put it under the stack
// (name override, orphan the old table, import), re-point the stream
// consumer, recount and check, and replay what the restore lost.
package restoreplan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dynastack/dynastack/constructs/catalog"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/infra/adopt"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/ddbguard"
)

// ErrRefused wraps every refusal of a request: the message says why and
// names the valid values.
var ErrRefused = errors.New("restore-plan")

// Request is what make restore-plan passes.
type Request struct {
	Stage, Service, Table string
	// Time is the restore point, RFC 3339 ("2026-03-01T09:30:00Z").
	Time string
	// Now is the time the plan is made (the restore point must lie in the
	// table's recovery window before it).
	Now time.Time
}

// Plan returns the commands, or an error wrapping ErrRefused.
func Plan(set ddbguard.Set, r Request) (string, error) {
	stage, err := config.Lookup(r.Stage)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrRefused, err)
	}
	var services []string
	for _, c := range catalog.Services() {
		services = append(services, c.Name)
	}
	if !slices.Contains(services, r.Service) {
		return "", fmt.Errorf("%w: unknown service %q: use one of %s", ErrRefused, r.Service, strings.Join(services, ", "))
	}
	targets, err := adopt.Targets(set, r.Stage, r.Service)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrRefused, err)
	}
	var ids []string
	var t *adopt.Target
	for i := range targets {
		ids = append(ids, targets[i].ConstructID)
		if targets[i].ConstructID == r.Table {
			t = &targets[i]
		}
	}
	if t == nil {
		return "", fmt.Errorf("%w: %s has no table %q: use one of %s (the construct id, as in config.TableKey)", ErrRefused, r.Service, r.Table, strings.Join(ids, ", "))
	}
	at, err := time.Parse(time.RFC3339, r.Time)
	if err != nil {
		return "", fmt.Errorf("%w: TIME %q is not RFC 3339 (2026-03-01T09:30:00Z): %v", ErrRefused, r.Time, err)
	}
	at = at.UTC()
	if !t.PITR {
		return "", fmt.Errorf("%w: %s's %s table in %s has no point-in-time recovery (the stage policy leaves it off in dev): nothing to restore from", ErrRefused, r.Service, r.Table, r.Stage)
	}
	window := time.Duration(t.RecoveryPeriodDays) * 24 * time.Hour
	switch {
	case !at.Before(r.Now):
		return "", fmt.Errorf("%w: TIME %s is not in the past (now %s)", ErrRefused, at.Format(time.RFC3339), r.Now.UTC().Format(time.RFC3339))
	case at.Before(r.Now.Add(-window)):
		return "", fmt.Errorf("%w: TIME %s is older than the %d-day recovery window (earliest %s); restore from an AWS Backup recovery point instead (docs/restoring.md)", ErrRefused,
			at.Format(time.RFC3339), t.RecoveryPeriodDays, r.Now.Add(-window).UTC().Format(time.RFC3339))
	}
	return write(stage, r, t, at), nil
}

func write(stage config.Stage, r Request, t *adopt.Target, at time.Time) string {
	old := t.Name
	restored := fmt.Sprintf("%s-r%s", strings.TrimSuffix(old, "-"+r.Stage), at.Format("20060102T1504"))
	if len(restored) > 255 {
		restored = restored[:255]
	}
	stack := r.Stage + "/" + r.Service
	key := config.TableKey(r.Service, r.Table)
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# Restore of %s (%s, stack %s) to %s — docs/restoring.md", old, key, stack, at.Format(time.RFC3339))
	p("# Region: the stage's%s. Every step is a command to read before running.", map[bool]string{true: " (" + stage.Region + ")", false: " (export AWS_REGION first)"}[stage.Region != ""])
	p("")
	p("## 1. Restore to a new table (the old one keeps serving meanwhile)")
	p("aws dynamodb restore-table-to-point-in-time --source-table-name %s --target-table-name %s \\", old, restored)
	p("  --restore-date-time %s%s", at.Format(time.RFC3339), billing(t))
	p("aws dynamodb wait table-exists --table-name %s", restored)
	p("")
	p("## 2. Give it what a restore does not copy (TTL, stream, recovery, protection, caps, tags), then compare")
	if t.TTLAttribute != "" && t.TTLEnabled {
		p("aws dynamodb update-time-to-live --table-name %s --time-to-live-specification Enabled=true,AttributeName=%s", restored, t.TTLAttribute)
	}
	if t.Stream != "" {
		p("aws dynamodb update-table --table-name %s --stream-specification StreamEnabled=true,StreamViewType=%s", restored, t.Stream)
	}
	p("aws dynamodb update-continuous-backups --table-name %s --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true,RecoveryPeriodInDays=%d", restored, t.RecoveryPeriodDays)
	if t.MaxRead > 0 || t.MaxWrite > 0 {
		p("aws dynamodb update-table --table-name %s --on-demand-throughput MaxReadRequestUnits=%d,MaxWriteRequestUnits=%d", restored, t.MaxRead, t.MaxWrite)
		for _, name := range sortedKeys(t.GSIs) {
			g := t.GSIs[name]
			p("aws dynamodb update-table --table-name %s --global-secondary-index-updates 'Update={IndexName=%s,OnDemandThroughput={MaxReadRequestUnits=%d,MaxWriteRequestUnits=%d}}'", restored, name, g.MaxRead, g.MaxWrite)
		}
	}
	if t.DeletionProtection {
		p("aws dynamodb update-table --table-name %s --deletion-protection-enabled", restored)
	}
	var tags []string
	for _, k := range sortedKeys(t.Tags) {
		tags = append(tags, fmt.Sprintf("Key=%s,Value=%s", k, t.Tags[k]))
	}
	if len(tags) > 0 {
		p("aws dynamodb tag-resource --resource-arn \"$(aws dynamodb describe-table --table-name %s --query Table.TableArn --output text)\" --tags %s", restored, strings.Join(tags, " "))
	}
	p("aws dynamodb describe-table --table-name %s > restored.json", restored)
	p("aws dynamodb describe-time-to-live --table-name %s > restored-ttl.json", restored)
	p("aws dynamodb describe-continuous-backups --table-name %s > restored-backups.json", restored)
	p("aws dynamodb list-tags-of-resource --resource-arn \"$(jq -r .Table.TableArn restored.json)\" > restored-tags.json")
	p("")
	p("## 3. Name it in the stage, compare it with the template (repeat step 2's fixes until it prints the mapping file)")
	p("#    infra/config/config.go, stage %s: TableNames: {config.TableKey(%q, %q): %q}", r.Stage, r.Service, r.Table, restored)
	p("make snapshots   # review: the table name and the functions' variable only")
	p("make adopt STAGE=%s SERVICE=%s DESCRIBE=\"restored.json restored-ttl.json restored-backups.json restored-tags.json\"", r.Stage, r.Service)
	p("")
	p("## 4. Stop the writers, take the old table out of the stack (it is kept: RETAIN), import the restored one")
	p("#    note the time: everything the old table took after %s and before now is lost from the restored one (step 7)", at.Format(time.RFC3339))
	p("npx cdk orphan --unstable=orphan '%s/%s'", stack, r.Table)
	p("npx cdk import --resource-mapping cdk.out/adopt/%s-%s-%s.resource-mapping.json '%s'", r.Stage, r.Service, restored, stack)
	p("make deploy STAGE=%s   # functions, grants and alarms now name %s", r.Stage, restored)
	p("")
	if r.Service == stakcontract.Name {
		p("## 5. Re-point Stak's stream consumer")
		p("#    the deploy replaced the StreamMapping: it reads the restored table's stream from LATEST; the old mapping is gone")
		p("aws lambda list-event-source-mappings --function-name \"$(aws cloudformation describe-stack-resources --stack-name %s-%s --query \"StackResources[?starts_with(LogicalResourceId,'StreamConsumer')&&ResourceType=='AWS::Lambda::Function'].PhysicalResourceId\" --output text)\"", r.Service, r.Stage)
		p("#    expect one mapping, State Enabled, EventSourceArn = $(aws dynamodb describe-table --table-name %s --query Table.LatestStreamArn --output text)", restored)
		p("")
		p("## 6. Recount every user's and every inbox's counters of the restored table (docs/schemas/stak.md, Runbook: recount)")
		p("aws dynamodb scan --table-name %s --filter-expression '#k = :us' --expression-attribute-names '{\"#k\":\"%s\"}' \\", restored, stakcontract.AttrKind)
		p("  --expression-attribute-values '{\":us\":{\"S\":\"US\"}}' --projection-expression '%s,%s,%s' --output json \\", stakcontract.AttrTenantKey, stakcontract.AttrInboxKey, stakcontract.AttrUID)
		p("  | jq -r '.Items[] | [.%s.S, .%s.S, .%s.S] | @tsv' | sort -u > counters.tsv", stakcontract.AttrTenantKey, stakcontract.AttrInboxKey, stakcontract.AttrUID)
		p("#    then, per line (tenant, inbox, uid), a SigV4-signed POST /admin/tenants/<tenant>/inboxes/<inbox>/recount with body {\"uid\":\"<uid>\"} ({} for the public uid %s)", stakcontract.PublicUID)
	} else {
		p("## 5. No stream consumer reads %s: nothing to re-point", old)
		p("")
		p("## 6. No counters in %s: nothing to recount", r.Service)
	}
	p("make migrate STAGE=%s SERVICE=%s CHECK=1   # the migrations' pre-flight check on the restored items (issue 33, item 1)", r.Stage, r.Service)
	p("")
	p("## 7. What was lost, and its replay")
	p("#    the restored table holds the items as they were at %s; changes after that are in the old table %s only", at.Format(time.RFC3339), old)
	p("#    export them from the old table's own point-in-time recovery, at most 24 hours per incremental export:")
	p("aws dynamodb export-table-to-point-in-time --table-arn \"$(aws dynamodb describe-table --table-name %s --query Table.TableArn --output text)\" \\", old)
	p("  --s3-bucket <bucket> --export-type INCREMENTAL_EXPORT \\")
	p("  --incremental-export-specification ExportFromTime=%s,ExportToTime=<the time of step 4, or +24h>,ExportViewType=NEW_AND_OLD_IMAGES", at.Format(time.RFC3339))
	p("#    read each change (NewImage, OldImage) and put back those that are not what the restore undid; then recount again (Stak)")
	p("#    when the replay is done and checked: aws dynamodb update-table --table-name %s --no-deletion-protection-enabled; aws dynamodb delete-table --table-name %s", old, old)
	return b.String()
}

// billing keeps an on-demand table on demand (a restore takes the source's
// mode; the override says it); a provisioned table keeps its capacity.
func billing(t *adopt.Target) string {
	if t.BillingMode == "PROVISIONED" {
		return ""
	}
	return " --billing-mode-override PAY_PER_REQUEST"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
