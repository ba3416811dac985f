package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/ops/migrate"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// tables creates the service's tables of the dev template and returns
// the contract variable → name map the migrations take.
func tables(t *testing.T, stack string) map[string]string {
	t.Helper()
	tmpl, names := testenv.Tables(t, testenv.Template(t, "dev", stack))
	env := testenv.ServiceEnv(t, tmpl, names, stack)
	out := map[string]string{}
	for k, v := range env {
		if strings.HasSuffix(k, "_TABLE") {
			out[k] = v
		}
	}
	require.NotEmpty(t, out, "%s: table variables", stack)
	return out
}

// put writes items as the original systems did: plain PutItem of the
// documents' JSON shapes.
func put(t *testing.T, table string, items ...map[string]any) {
	t.Helper()
	c := testenv.Client(t)
	for _, it := range items {
		av, err := attributevalue.MarshalMap(it)
		require.NoError(t, err)
		_, err = c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: av})
		require.NoError(t, err)
	}
}

func config(t *testing.T, tabs map[string]string, out *bytes.Buffer) migrate.Config {
	return config2(t, testenv.Endpoint(t), tabs, out)
}

func config2(t *testing.T, endpoint string, tabs map[string]string, out *bytes.Buffer) migrate.Config {
	t.Helper()
	getenv := func(k string) string {
		if k == "AWS_ENDPOINT_URL_DYNAMODB" {
			return endpoint
		}
		return testenv.Getenv(t, nil)(k)
	}
	c, err := ddb.NewClient(context.Background(), getenv, migrate.NoRetries)
	require.NoError(t, err)
	return migrate.Config{Client: c, Stage: "dev", Tables: tabs, Out: out, Segments: 3, PageSize: 25,
		ReadUnits: 1000, WriteUnits: 1000}
}

// legacyTickets are n tickets as document 003's Python wrote them:
// isoformat timestamps, trailing zeros dropped (…12:30:00Z), comments
// appended with if_not_exists, some tickets without comments at all.
func legacyTickets(n int) []map[string]any {
	var out []map[string]any
	base := time.Date(2026, 2, 9, 12, 20, 0, 0, time.UTC)
	for i := range n {
		created := base.Add(time.Duration(i) * time.Second).Format(time.RFC3339) // 2026-02-09T12:20:05Z
		it := map[string]any{"ticket_id": uuid.NewString(), "caller_id": fmt.Sprintf("session-%d", i%7),
			"issue_description": "VPN does not connect", "status": "open", "created_at": created, "updated_at": created}
		if i%3 != 0 {
			it["comments"] = []map[string]any{{"comment_text": "Tried restarting", "added_at": "2026-02-09T12:30:00Z"}}
		}
		out = append(out, it)
	}
	return out
}

func itsmTable(tabs map[string]string) string { return tabs[itsmcontract.EnvTable] }

// TestDryRunChangesNothing: a dry run counts and samples, and the table's
// digest is the same after it.
func TestDryRunChangesNothing(t *testing.T) {
	tabs := tables(t, "itsm")
	put(t, itsmTable(tabs), legacyTickets(30)...)
	put(t, itsmTable(tabs), map[string]any{"ticket_id": uuid.NewString(), "caller_id": "s", "issue_description": "x", "status": "open",
		"created_at": "2026-02-09T12:20:25.343883Z", "updated_at": "2026-02-09T12:20:25.343883Z", "comments": []any{}})
	before := testenv.Digest(t, testenv.Client(t), itsmTable(tabs))
	var out bytes.Buffer
	cfg := config(t, tabs, &out)
	cfg.DryRun = true
	res, err := migrate.Run(context.Background(), cfg, Registry()["itsm"])
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, before, testenv.Digest(t, testenv.Client(t), itsmTable(tabs)), "a dry run writes nothing, no checkpoint either")
	assert.Equal(t, 31, res[0].Scanned, "scanned")
	assert.Equal(t, 30, res[0].Needed, "tickets with short timestamps")
	assert.Equal(t, 0, res[0].Changed, "changed by a dry run")
	assert.Equal(t, 10, res[1].Needed, "tickets without comments")
	assert.Len(t, res[0].Samples, 5, "samples shown")
	assert.Contains(t, out.String(), "would change ticket_id=", "samples printed")
	assert.Contains(t, out.String(), "2026-02-09T12:30:00Z → 2026-02-09T12:30:00.000000Z", "a sample says what changes")
}

// TestKilledAndResumed: a run stopped after N items resumes where it
// stopped; in all, every item is changed exactly once and the counts are
// exact; a third run does nothing.
func TestKilledAndResumed(t *testing.T) {
	tabs := tables(t, "itsm")
	const n = 120
	put(t, itsmTable(tabs), legacyTickets(n)...)
	migs := Registry()["itsm"][:1]

	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	cfg := config(t, tabs, &out)
	cfg.AfterItem = cancelAfter(40, cancel)
	first, err := migrate.Run(ctx, cfg, migs)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, first, 1)
	assert.Less(t, first[0].Changed, n, "the first run stopped early")
	assert.GreaterOrEqual(t, first[0].Changed, 40, "the first run changed what it saw")

	cfg.AfterItem = nil
	second, err := migrate.Run(context.Background(), cfg, migs)
	require.NoError(t, err)
	require.Len(t, second, 1)
	// The second run's counts include the first's (one checkpoint).
	assert.Equal(t, n, second[0].Scanned, "scanned in all")
	assert.Equal(t, n, second[0].Changed, "each item changed once, none twice")
	assert.Equal(t, 0, second[0].Skipped, "no item met twice")
	assert.Contains(t, out.String(), "resuming after", "the second run resumed")

	third, err := migrate.Run(context.Background(), cfg, migs)
	require.NoError(t, err)
	require.Len(t, third, 1)
	assert.True(t, third[0].AlreadyDone, "a done migration never runs again")

	// Every ticket now has the fixed-width form.
	page, err := testenv.Client(t).Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(itsmTable(tabs))})
	require.NoError(t, err)
	for _, it := range page.Items {
		if strings.HasPrefix(migrate.String(it, itsmcontract.AttrTicketID), migrate.RecordPrefix) {
			continue
		}
		_, changed, ok := migrate.Timestamp(migrate.String(it, itsmcontract.AttrCreatedAt))
		assert.True(t, ok && !changed, "created_at of %s is fixed-width", migrate.String(it, itsmcontract.AttrTicketID))
	}
}

// TestOutOfOrder: the second migration alone is refused while the first
// is not done.
func TestOutOfOrder(t *testing.T) {
	tabs := tables(t, "itsm")
	var out bytes.Buffer
	cfg := config(t, tabs, &out)
	cfg.Only = "itsm-0002-comments-list"
	_, err := migrate.Run(context.Background(), cfg, Registry()["itsm"])
	require.ErrorIs(t, err, migrate.ErrOutOfOrder)
	cfg.Only = "itsm-0001-timestamps"
	_, err = migrate.Run(context.Background(), cfg, Registry()["itsm"])
	require.NoError(t, err)
	cfg.Only = "itsm-0002-comments-list"
	_, err = migrate.Run(context.Background(), cfg, Registry()["itsm"])
	require.NoError(t, err, "in order once the first is done")
}

// TestBudgetUnderThrottles: behind the fault injector throttling 30% of
// requests, the run backs off, finishes every item, and stays within its
// write budget (what it consumed over the time it took, plus one second's
// burst).
func TestBudgetUnderThrottles(t *testing.T) {
	tabs := tables(t, "itsm")
	const n = 90
	put(t, itsmTable(tabs), legacyTickets(n)...)
	proxy, err := ddbfault.Start(testenv.Endpoint(t))
	require.NoError(t, err)
	t.Cleanup(proxy.Close)
	proxy.Set(ddbfault.Throttle, 0.3)
	var out bytes.Buffer
	cfg := config2(t, proxy.URL, tabs, &out)
	const budget = 30.0
	cfg.ReadUnits, cfg.WriteUnits = budget, budget
	res, err := migrate.Run(context.Background(), cfg, Registry()["itsm"][:1])
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, n, res[0].Changed, "every item changed once despite the throttles")
	assert.Positive(t, proxy.Faults(), "the proxy throttled")
	assert.Positive(t, res[0].Usage.Throttles, "the run saw the throttles")
	took := res[0].Took.Seconds()
	assert.LessOrEqual(t, res[0].Usage.WriteUnits, budget*took+budget, "write units within the budget over %.1fs", took)
	assert.LessOrEqual(t, res[0].Usage.ReadUnits, budget*took+budget, "read units within the budget over %.1fs", took)
	assert.GreaterOrEqual(t, res[0].Usage.WriteUnits, float64(n), "write units counted")
}

// TestBudgetPaces: the budget, not DynamoDB, sets the pace: 60 writes at
// 20 units a second take about two seconds (the first second is burst).
func TestBudgetPaces(t *testing.T) {
	tabs := tables(t, "itsm")
	put(t, itsmTable(tabs), legacyTickets(60)...)
	var out bytes.Buffer
	cfg := config(t, tabs, &out)
	cfg.WriteUnits = 20
	res, err := migrate.Run(context.Background(), cfg, Registry()["itsm"][:1])
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.GreaterOrEqual(t, res[0].Took, time.Duration((res[0].Usage.WriteUnits-20)/20*float64(time.Second))-100*time.Millisecond, "paced by the write budget")
}

// TestCheck: the pre-flight says which migrations the sample needs.
func TestCheck(t *testing.T) {
	tabs := tables(t, "itsm")
	put(t, itsmTable(tabs), legacyTickets(3)[1:]...) // both with comments
	var out bytes.Buffer
	needs, err := migrate.Preflight(context.Background(), config(t, tabs, &out), Registry()["itsm"], 100)
	require.NoError(t, err)
	require.Len(t, needs, 2)
	assert.Equal(t, 2, needs[0].Needed, "timestamps")
	assert.Equal(t, 0, needs[1].Needed, "comments present")
	assert.Contains(t, out.String(), "itsm-0001-timestamps: NEEDED by 2 of 2", "verdict line")
}

func TestCommandRefuses(t *testing.T) {
	var out, errs bytes.Buffer
	err := run(context.Background(), []string{"-stage", "dev", "-service", "helpdesk"}, func(string) string { return "" }, &out, &errs)
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.code, "unknown service")
	err = run(context.Background(), []string{"-service", "itsm"}, func(string) string { return "" }, &out, &errs)
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.code, "no stage")
	err = run(context.Background(), []string{"-stage", "prod", "-service", "itsm", "-templates", "../../../test/snapshots"},
		func(k string) string { return map[string]string{"AWS_REGION": "us-east-1"}[k] }, &out, &errs)
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.code, "no credentials")
	assert.Contains(t, ee.msg, "no AWS credentials for stage prod", "says so")
	assert.NotContains(t, ee.msg, "\n", "in one line")
}

func TestTableNamesFromTheStageTemplate(t *testing.T) {
	c, ok := contractOf("nucleus")
	require.True(t, ok)
	got, err := tableNames("../../../test/snapshots", "prod", c, func(string) string { return "" })
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"NUCLEUS_APP_TABLE": "NucleusAppTable-prod", "NUCLEUS_AUDIT_TABLE": "NucleusAuditTable-prod"}, got)
}

var _ = types.AttributeValueMemberS{}

// TestCheckAfterAStoppedRun: a run stopped part-way has changed the first
// items of the scan, which are the pre-flight's sample; the check must
// still say the migration is needed (it is in progress) and the command
// must exit 1, not report "not needed" and exit 0.
func TestCheckAfterAStoppedRun(t *testing.T) {
	tabs := tables(t, "itsm")
	const n = 60
	put(t, itsmTable(tabs), legacyTickets(n)...)
	migs := Registry()["itsm"]

	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	cfg := config(t, tabs, &out)
	cfg.Segments = 1 // one segment: the run goes through the table in the pre-flight's order
	cfg.AfterItem = cancelAfter(30, cancel)
	first, err := migrate.Run(ctx, cfg, migs)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, first, 1)
	require.Less(t, first[0].Scanned, n, "the run stopped part-way")

	out.Reset()
	cfg.AfterItem = nil
	needs, err := migrate.Preflight(context.Background(), cfg, migs, 20)
	require.NoError(t, err)
	require.Len(t, needs, 2)
	assert.Equal(t, 0, needs[0].Needed, "the sample is the part the stopped run changed")
	assert.False(t, needs[0].Done, "not done")
	assert.True(t, needs[0].InProgress, "the checkpoint says it stopped part-way")
	assert.True(t, needs[0].Pending(), "a migration in progress is needed")
	assert.Contains(t, out.String(), "itsm-0001-timestamps: IN PROGRESS", "the verdict says it stopped part-way")
	assert.NotContains(t, out.String(), "itsm-0001-timestamps: not needed", "no all-clear")

	err = run(context.Background(), []string{"-stage", "dev", "-service", "itsm", "-check", "-sample", "20"}, testenv.Getenv(t, tabs), &out, &out)
	var ee *exitError
	require.ErrorAs(t, err, &ee, "the check fails while a migration is in progress")
	assert.Equal(t, 1, ee.code, "exit 1: needed")
}

// TestBudgetChargesFailedConditions: DynamoDB bills a write whose
// condition fails (the existing item's size, at least one unit), though
// the answer is an error that reports no consumed capacity. The budget
// charges it: a migration racing the API, whose writes are mostly
// skipped, stays within WRITE_UNITS.
func TestBudgetChargesFailedConditions(t *testing.T) {
	tabs := tables(t, "itsm")
	table := itsmTable(tabs)
	big := strings.Repeat("x", 5000) // a 5 KB ticket: 5 units for a write of it
	existing := uuid.NewString()
	put(t, table, map[string]any{"ticket_id": existing, "caller_id": "s", "issue_description": big, "status": "open",
		"created_at": "2026-02-09T12:20:25.343883Z", "updated_at": "2026-02-09T12:20:25.343883Z", "comments": []any{}})
	for _, tc := range []struct {
		name    string
		id      string
		atLeast float64
	}{
		{"no such item", uuid.NewString(), 1},
		{"a 5 KB item changed meanwhile", existing, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := migrate.NewBudgeted(config(t, tabs, &out).Client, 1000, 1000, time.Now)
			_, err := ddb.UpdateExpr(context.Background(), c, table, migrate.Item{"ticket_id": ddb.S(tc.id)}, ddb.Expr{
				Update: "SET #s = :s", Condition: "#s = :old", Names: map[string]string{"#s": "status"},
				Values: migrate.Item{":s": ddb.S("closed"), ":old": ddb.S("resolved")},
			})
			require.True(t, ddb.IsConditionFailed(err), "the condition fails: %v", err)
			assert.GreaterOrEqual(t, c.Usage().WriteUnits, tc.atLeast, "a failed condition is charged to the write budget")
		})
	}
}

// TestITSMTicketsWithoutATimestamp: tickets the PoC wrote without
// created_at, or with a timestamp that is no string, neither stop the
// migration nor lose what they hold.
func TestITSMTicketsWithoutATimestamp(t *testing.T) {
	tabs := tables(t, "itsm")
	table := itsmTable(tabs)
	noCreated, numUpdated := uuid.NewString(), uuid.NewString()
	put(t, table,
		map[string]any{"ticket_id": noCreated, "caller_id": "s", "issue_description": "x", "status": "open",
			"updated_at": "2026-02-09T12:20:05Z", "comments": []any{}},
		map[string]any{"ticket_id": numUpdated, "caller_id": "s", "issue_description": "x", "status": "open",
			"created_at": "2026-02-09T12:20:05Z", "updated_at": 1707481205, "comments": []any{}},
	)
	var out bytes.Buffer
	res, err := migrate.Run(context.Background(), config(t, tabs, &out), Registry()["itsm"][:1])
	require.NoError(t, err, "the run goes through: %s", out.String())
	require.Len(t, res, 1)
	assert.Equal(t, 2, res[0].Needed, "both need it")

	got := func(id string) migrate.Item {
		o, err := testenv.Client(t).GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table),
			Key: migrate.Item{"ticket_id": ddb.S(id)}, ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		return o.Item
	}
	a := got(noCreated)
	assert.Equal(t, "2026-02-09T12:20:05.000000Z", migrate.String(a, "updated_at"), "updated_at in the fixed-width form")
	assert.False(t, migrate.Has(a, "created_at"), "no created_at made up")
	b := got(numUpdated)
	assert.Equal(t, &types.AttributeValueMemberN{Value: "1707481205"}, b["updated_at"], "a number in updated_at is kept, not blanked")
	assert.Equal(t, 1, res[0].Changed, "the ticket without created_at changed")
	assert.Equal(t, 1, res[0].Reported, "the ticket with a number in updated_at reported")
	assert.Contains(t, out.String(), "ticket "+numUpdated+": not changed", "the report names it")
}

// TestITSMTicketOverTheLimitAfterTheChange: a PoC ticket (no comment
// limit) so close to 400 KB that the longer timestamps would take it over
// is reported, and the run goes on to the other tickets instead of
// stopping at it on every run.
func TestITSMTicketOverTheLimitAfterTheChange(t *testing.T) {
	tabs := tables(t, "itsm")
	table := itsmTable(tabs)
	id := uuid.NewString()
	comments := make([]map[string]any, 0, 4000)
	for range 4000 {
		comments = append(comments, map[string]any{"comment_text": "ok", "added_at": "2026-02-09T12:30:00Z"})
	}
	full := map[string]any{"ticket_id": id, "caller_id": "s", "status": "open",
		"created_at": "2026-02-09T12:20:05Z", "updated_at": "2026-02-09T12:20:05Z", "comments": comments}
	av, err := attributevalue.MarshalMap(full)
	require.NoError(t, err)
	full["issue_description"] = strings.Repeat("x", ddb.MaxItemBytes-ddb.ItemSize(av)-2000)
	put(t, table, full)
	put(t, table, legacyTickets(10)...)

	var out bytes.Buffer
	res, err := migrate.Run(context.Background(), config(t, tabs, &out), Registry()["itsm"][:1])
	require.NoError(t, err, "the run goes through: %s", out.String())
	require.Len(t, res, 1)
	assert.Equal(t, 10, res[0].Changed, "the other tickets changed")
	assert.Equal(t, 1, res[0].Reported, "the one too large reported")
	assert.Contains(t, out.String(), id, "the report names it")
	assert.Contains(t, out.String(), "400 KB", "and says why")
}

// TestRacedTicketIsNotLeftBehind: the live API adds a comment to a ticket
// between the scan's read and the migration's write, so the write's
// condition fails. The ticket still needs the migration (its created_at
// and first comment are in the short form): the run must not record the
// migration done with that ticket left behind, since a done migration
// never runs again.
func TestRacedTicketIsNotLeftBehind(t *testing.T) {
	tabs := tables(t, "itsm")
	table := itsmTable(tabs)
	tickets := legacyTickets(20)
	put(t, table, tickets...)
	raced := tickets[1]["ticket_id"].(string) // one with a comment
	store := itsm.NewStore(testenv.Client(t), table, nil)
	mig := Registry()["itsm"][0]
	apply := mig.Apply
	var once sync.Once
	var commentErr error
	mig.Apply = func(ctx context.Context, env *migrate.Env, item migrate.Item) (migrate.Outcome, error) {
		if migrate.String(item, itsmcontract.AttrTicketID) == raced {
			once.Do(func() { _, commentErr = store.AddComment(ctx, raced, "Still broken") })
		}
		return apply(ctx, env, item)
	}
	var out bytes.Buffer
	res, err := migrate.Run(context.Background(), config(t, tabs, &out), []migrate.Migration{mig})
	require.NoError(t, err)
	require.NoError(t, commentErr, "the API's comment")
	require.Len(t, res, 1)

	o, err := testenv.Client(t).GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: migrate.Item{itsmcontract.AttrTicketID: ddb.S(raced)}, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	what, needed := mig.Check(o.Item, time.Now())
	assert.False(t, needed, "the raced ticket is migrated, not left behind a done migration: %s", what)
	assert.Len(t, o.Item[itsmcontract.AttrComments].(*types.AttributeValueMemberL).Value, 2, "the API's comment kept")
	assert.Equal(t, len(tickets), res[0].Changed, "every ticket changed, the raced one after it was read again")

	again, err := migrate.Run(context.Background(), config(t, tabs, &out), []migrate.Migration{mig})
	require.NoError(t, err)
	assert.True(t, again[0].AlreadyDone, "done")
}

// TestLeaseHeldThroughASlowPage: a page whose writes the budget paces
// over more than the lease (the clock here moves 20 s per item, the
// lease is a minute, a page is 25 items) still holds the migration: a
// second operator's run is refused while the first one applies it, not
// let in to apply it too with a budget of its own.
func TestLeaseHeldThroughASlowPage(t *testing.T) {
	tabs := tables(t, "itsm")
	put(t, itsmTable(tabs), legacyTickets(30)...)
	migs := Registry()["itsm"][:1]
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }

	var out bytes.Buffer
	cfg := config(t, tabs, &out)
	cfg.Segments, cfg.Now, cfg.Lease = 1, now, time.Minute
	var items atomic.Int32
	var second error
	cfg.AfterItem = func() {
		clock.Add(int64(20 * time.Second))
		if items.Add(1) == 5 { // 100 s into the first page
			other := config(t, tabs, &bytes.Buffer{})
			other.Segments, other.Now = 1, now
			_, second = migrate.Run(context.Background(), other, migs)
		}
	}
	res, err := migrate.Run(context.Background(), cfg, migs)
	require.NoError(t, err, "the first run keeps its lease to the end")
	require.Len(t, res, 1)
	assert.ErrorIs(t, second, migrate.ErrHeld, "the second run is refused while the first one runs")
	assert.Equal(t, 30, res[0].Changed, "the first run changed every ticket")
}

// cancelAfter is an AfterItem that interrupts the run (cancel) once n
// items have been handled, as an operator's Ctrl-C would.
func cancelAfter(n int32, cancel context.CancelFunc) func() {
	var seen atomic.Int32
	return func() {
		if seen.Add(1) == n {
			cancel()
		}
	}
}
