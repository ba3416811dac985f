// Package migrate runs a service's data migrations over its live tables
// (`make migrate STAGE=… SERVICE=…`, docs/migrations.md): the operator
// tool behind a switch to dynastack, never linked into a Lambda function.
//
// A Migration selects items (Check) and changes each one (Apply) with a
// conditional write, so a re-run, a resumed run or a concurrent writer
// never changes an item twice. The engine scans the migration's table in
// parallel segments within a capacity budget (Budgeted), keeps a
// checkpoint item per migration in that same table (each segment's
// position, the counts, a lease), so a stopped or killed run resumes where
// it stopped, records the migration as done when every segment is, never
// runs a done one again, and refuses to run one before an earlier one of
// the same service is done. A dry run scans, counts and shows samples, and
// writes nothing.
package migrate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Item is a DynamoDB item as Scan returns it.
type Item = map[string]types.AttributeValue

// Outcome is what Apply did to one item.
type Outcome int

const (
	// Changed: the item was written.
	Changed Outcome = iota
	// Skipped: the write's condition failed: the item changed since it was
	// read (a concurrent writer, or an earlier run that already did it).
	Skipped
	// Reported: nothing written; the item is listed in the report for a
	// person to act on.
	Reported
)

// Migration is one change of a service's items.
type Migration struct {
	// ID orders and names the migration: "<service>-NNNN-<what>". Its
	// checkpoint and record are kept under it; never rename one that ran.
	ID string
	// Description says what it changes and why, in one line.
	Description string
	// Table is the table it scans (the contract's).
	Table service.Table
	// Check tells whether item needs the migration, and what would change
	// (the dry run's sample line). It reads the item only.
	Check func(item Item, now time.Time) (what string, needed bool)
	// Apply changes one item Check selected, with conditional writes
	// through env (Env.Update, Env.Transact, or a store on Env.Client
	// whose writes are conditional), and may add a line to the report.
	Apply func(ctx context.Context, env *Env, item Item) (Outcome, error)
}

// Env is what Apply gets.
type Env struct {
	// Client is the budgeted client: use it, and only it, for DynamoDB.
	Client *Budgeted
	// Table is the migration's table; Tables every table of the service by
	// the contract's variable.
	Table  string
	Tables map[string]string
	// Stage is the stage migrated.
	Stage string
	// Now is the run's clock.
	Now func() time.Time

	report *lockedWriter
	keys   []string // the table's key attributes, partition key first
}

// Reportf adds one line to the migration's report.
func (e *Env) Reportf(format string, args ...any) {
	e.report.printf(format+"\n", args...)
}

// ErrUnconditional: a migration tried a write without a condition.
var ErrUnconditional = errors.New("migrate: every item change must be conditional")

// Update applies one conditional UpdateItem: Changed, or Skipped when its
// condition fails.
func (e *Env) Update(ctx context.Context, key Item, x ddb.Expr) (Outcome, error) {
	if x.Condition == "" {
		return 0, ErrUnconditional
	}
	_, err := ddb.UpdateExpr(ctx, e.Client, e.Table, key, x)
	return e.outcome("UpdateItem", key, err)
}

// Transact applies one TransactWriteItems whose every item carries a
// condition: Changed, or Skipped when one fails.
func (e *Env) Transact(ctx context.Context, items ...types.TransactWriteItem) (Outcome, error) {
	for _, it := range items {
		if it.Put != nil && it.Put.ConditionExpression == nil || it.Update != nil && it.Update.ConditionExpression == nil ||
			it.Delete != nil && it.Delete.ConditionExpression == nil {
			return 0, ErrUnconditional
		}
	}
	_, err := e.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	var key Item
	if len(items) > 0 {
		switch it := items[0]; {
		case it.Put != nil:
			key = it.Put.Item
		case it.Update != nil:
			key = it.Update.Key
		case it.Delete != nil:
			key = it.Delete.Key
		}
	}
	return e.outcome("TransactWriteItems", key, err)
}

// outcome is Changed, Skipped when a condition failed, or Reported when
// the change would take the item over DynamoDB's 400 KB: that item can
// never be changed this way, and stopping the run at it would stop every
// run there, so it is listed for a person and the run goes on.
func (e *Env) outcome(op string, key Item, err error) (Outcome, error) {
	if err == nil {
		return Changed, nil
	}
	werr := ddb.Wrap(op, err)
	if ddb.IsConditionFailed(werr) {
		return Skipped, nil
	}
	if ddb.IsItemTooLarge(werr) {
		e.Reportf("%s: not changed: the change would take the item over DynamoDB's 400 KB item limit (%s refused it); make room in it and make the change by hand",
			describeKey(key, e.keys), op)
		return Reported, nil
	}
	return 0, fmt.Errorf("migrate: %s: %w", op, err)
}

// Counts are a migration's results, kept per segment in its checkpoint.
type Counts struct {
	Scanned, Needed, Changed, Skipped, Reported int
}

func (c *Counts) add(o Counts) {
	c.Scanned += o.Scanned
	c.Needed += o.Needed
	c.Changed += o.Changed
	c.Skipped += o.Skipped
	c.Reported += o.Reported
}

// Result is what Run did for one migration.
type Result struct {
	ID string
	Counts
	// AlreadyDone: the migration was recorded as done; nothing ran.
	AlreadyDone bool
	// Samples are the first items a dry run would change, with what.
	Samples []string
	Usage   Usage
	Took    time.Duration
}

// Config is one run of a service's migrations.
type Config struct {
	// Client is made with ddb.NewClient(…, NoRetries).
	Client *dynamodb.Client
	// Stage and Tables (contract variable → physical name) locate the data.
	Stage  string
	Tables map[string]string
	// Only runs one migration (refused unless the earlier ones are done).
	Only string
	// DryRun scans and counts, shows Samples and writes nothing.
	DryRun bool
	// Segments of the parallel scan (default 4; a resumed run keeps its
	// checkpoint's); PageSize items per Scan page (default 100).
	Segments int
	PageSize int32
	// ReadUnits and WriteUnits per second (defaults 50 and 25).
	ReadUnits, WriteUnits float64
	// Samples a dry run shows (default 5).
	Samples int
	// Out gets results and reports; Progress the progress lines (both may
	// be nil).
	Out, Progress io.Writer
	// ProgressEvery is the least time between progress lines (default 2 s).
	ProgressEvery time.Duration
	// Lease is how long a run holds a migration after its last checkpoint
	// (default 1 minute): a killed run's migration can be taken over then.
	Lease time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// AfterItem, when set, is called after each item is done (tests stop a
	// run there).
	AfterItem func()
}

func (c *Config) defaults() {
	if c.Segments <= 0 {
		c.Segments = 4
	}
	if c.PageSize <= 0 {
		c.PageSize = 100
	}
	if c.ReadUnits <= 0 {
		c.ReadUnits = 50
	}
	if c.WriteUnits <= 0 {
		c.WriteUnits = 25
	}
	if c.Samples <= 0 {
		c.Samples = 5
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = 2 * time.Second
	}
	if c.Lease <= 0 {
		c.Lease = time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// ErrOutOfOrder: a migration was asked for, or found recorded, out of the
// service's order.
var ErrOutOfOrder = errors.New("migrate: out of order")

// ErrHeld: another run holds the migration's lease.
var ErrHeld = errors.New("migrate: another run holds the migration")

// Validate checks a service's list: ids unique, each with its table,
// Check and Apply.
func Validate(migs []Migration) error {
	seen := map[string]bool{}
	for _, m := range migs {
		switch {
		case m.ID == "" || strings.ContainsAny(m.ID, "# /"):
			return fmt.Errorf("migrate: migration id %q: want <service>-NNNN-<what>", m.ID)
		case seen[m.ID]:
			return fmt.Errorf("migrate: migration id %s twice", m.ID)
		case m.Table.Env == "" || m.Check == nil || m.Apply == nil || m.Description == "":
			return fmt.Errorf("migrate: migration %s needs a Table, a Description, Check and Apply", m.ID)
		}
		seen[m.ID] = true
	}
	return nil
}

// Run runs the service's migrations migs, in order, each to its end
// before the next; it stops at the first error or when ctx ends (a stopped
// migration resumes at the next Run).
func Run(ctx context.Context, cfg Config, migs []Migration) ([]Result, error) {
	cfg.defaults()
	if err := Validate(migs); err != nil {
		return nil, err
	}
	client := NewBudgeted(cfg.Client, cfg.ReadUnits, cfg.WriteUnits, cfg.Now)
	r := &runner{cfg: cfg, client: client, keys: map[string][]string{}}
	records, err := r.records(ctx, migs)
	if err != nil {
		return nil, err
	}
	if err := order(migs, records, cfg.Only); err != nil {
		return nil, err
	}
	var results []Result
	for i, m := range migs {
		if cfg.Only != "" && m.ID != cfg.Only {
			continue
		}
		if records[i].done() {
			results = append(results, Result{ID: m.ID, AlreadyDone: true, Counts: records[i].total()})
			fmt.Fprintf(cfg.Out, "%s: done at %s, not run again\n", m.ID, records[i].Finished)
			continue
		}
		if cfg.DryRun && i > 0 && !records[i-1].done() && (cfg.Only == "" || migs[i-1].ID != cfg.Only) {
			// A dry run of a later migration sees the items before the
			// earlier ones change them: say so.
			fmt.Fprintf(cfg.Out, "%s: (dry run before %s ran: counts as the table is now)\n", m.ID, migs[i-1].ID)
		}
		res, err := r.run(ctx, m)
		results = append(results, res)
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// order refuses to run migrations out of order: a done one after one not
// done (a migration inserted before others that ran), or Only with an
// earlier one not done.
func order(migs []Migration, records []record, only string) error {
	firstPending := -1
	for i := range migs {
		if !records[i].done() {
			if firstPending < 0 {
				firstPending = i
			}
			continue
		}
		if firstPending >= 0 {
			return fmt.Errorf("%w: %s is done but the earlier %s is not: new migrations go at the end of the list", ErrOutOfOrder, migs[i].ID, migs[firstPending].ID)
		}
	}
	if only == "" {
		return nil
	}
	for i, m := range migs {
		if m.ID == only {
			if firstPending >= 0 && firstPending < i {
				return fmt.Errorf("%w: %s runs after %s, which is not done: run that first (or without ID=)", ErrOutOfOrder, only, migs[firstPending].ID)
			}
			return nil
		}
	}
	ids := make([]string, len(migs))
	for i, m := range migs {
		ids[i] = m.ID
	}
	return fmt.Errorf("migrate: no migration %s; this service has: %s", only, strings.Join(ids, ", "))
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// describeKey prints an item's key attributes, for samples and reports.
func describeKey(item Item, keys []string) string {
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if v, ok := item[k].(*types.AttributeValueMemberS); ok {
			parts = append(parts, k+"="+v.Value)
		}
	}
	sort.Strings(parts[min(1, len(parts)):])
	return strings.Join(parts, " ")
}
