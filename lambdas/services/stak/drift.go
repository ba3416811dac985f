package stak

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
)

// Bounds of one drift check run (docs/schemas/stak.md, "Drift check"):
// what it reads and how long it may take, whatever the table's size.
const (
	// DriftSampleItems is the size of the sampled scan segment: the table
	// is cut into about ItemCount/DriftSampleItems segments and a run
	// reads one, at most twice this many items (one Scan page, keys only).
	DriftSampleItems = 200
	// DriftMaxPartitions bounds the partitions (a user's or an inbox's
	// public messages in one inbox) recounted per run.
	DriftMaxPartitions = 20
	// DriftMaxItems bounds the messages and receipts counted in one
	// partition: a larger one is skipped (counted in the report), so one
	// huge inbox cannot make a run slow or costly.
	DriftMaxItems = 1000
	// DriftRunTime bounds a run; partitions not reached are left for the
	// next run (the function's timeout is above it and DriftSettle).
	DriftRunTime = 40 * time.Second
	// DriftSettle is how long a partition found drifted waits before it is
	// checked again: a TTL deletion is decremented by the stream consumer
	// within seconds (its batching window is 5 s), and a counter caught in
	// that window is not drift. Only drift both checks see, on counters
	// that did not move in between, is reported.
	DriftSettle = 15 * time.Second
)

// SampleAPI is what the drift check calls besides the store's queries:
// DescribeTable for the table's item count, and Scan of one segment.
type SampleAPI interface {
	ddb.API
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// DriftCheck is the scheduled read-only recount of a sample of counters
// (contract.DriftCheck): each run picks one scan segment from its fire
// time, recounts the partitions whose items it found as the operator's
// recount does, writes nothing, and emits the drifted counters it found
// as contract.CounterDrift. The repair stays the operator's recount
// (docs/schemas/stak.md, "Runbook: recount").
type DriftCheck struct {
	client SampleAPI
	store  *Store
	log    *slog.Logger
	// settle is DriftSettle; tests shorten it.
	settle time.Duration
}

var _ fn.Job = (*DriftCheck)(nil)

// NewDriftCheck builds the check from its function's environment
// (STAK_INBOX_TABLE): the constructor of DriftFunction.
func NewDriftCheck(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (fn.Job, error) {
	return fn.New(ctx, getenv, ConfigFromEnv, (*Config).SetClient, func(cfg Config) fn.Job {
		return NewDriftCheckFromConfig(cfg, DriftSettle)
	}, opts...)
}

// NewDriftCheckFromConfig builds the check from cfg (Table and Client,
// which must be able to Scan and DescribeTable, as *dynamodb.Client can;
// Logger optional) waiting settle before it confirms a drift.
func NewDriftCheckFromConfig(cfg Config, settle time.Duration) *DriftCheck {
	client, ok := cfg.Client.(SampleAPI)
	if !ok {
		panic(fmt.Sprintf("stak: the drift check's client %T cannot Scan or DescribeTable", cfg.Client))
	}
	log := fn.Logger(contract.DriftCheck.Name, cfg.Client, cfg.Logger)
	return &DriftCheck{client: client, store: &Store{client: cfg.Client, table: cfg.Table, now: time.Now}, log: log, settle: settle}
}

// DriftReport is what one run found.
type DriftReport struct {
	// Segment and Segments name the scan segment sampled.
	Segment, Segments int
	// Scanned counts the items the sample scan read.
	Scanned int
	// Checked counts the partitions recounted; Skipped those with more
	// than DriftMaxItems items, or whose counters moved during the check
	// (a publish or a mark: checked again by a later run), or left when the
	// run's time was up.
	Checked, Skipped int
	// Drifted lists each counter found drifted by both checks, as
	// "<partition key> <counter sort key>".
	Drifted []string
}

// Run checks the sample of the fire time ev.ScheduledTime and emits the
// drifted counters found (0 on a healthy table, so the alarm's metric has
// data every hour). The sample is a function of the fire time: a retry of
// one fire reads the same segment, and runs that overlap only read.
func (d *DriftCheck) Run(ctx context.Context, ev fn.ScheduleEvent) error {
	if ev.ScheduledTime.IsZero() {
		return fn.ErrNoScheduledTime
	}
	rep, err := d.Check(ctx, ev.ScheduledTime)
	if err != nil {
		return err
	}
	d.log.InfoContext(ctx, "drift check", "scheduled_time", ev.ScheduledTime, "segment", rep.Segment, "segments", rep.Segments,
		"scanned", rep.Scanned, "checked", rep.Checked, "skipped", rep.Skipped, "drifted", rep.Drifted)
	metrics.Emit(ctx, d.log, contract.CounterDrift, float64(len(rep.Drifted)))
	return nil
}

// Check samples the segment of fire and recounts its partitions, read
// only.
func (d *DriftCheck) Check(ctx context.Context, fire time.Time) (*DriftReport, error) {
	ctx, cancel := context.WithTimeout(ctx, DriftRunTime)
	defer cancel()
	rep := &DriftReport{Drifted: []string{}}
	parts, err := d.sample(ctx, fire, rep)
	if err != nil {
		return rep, err
	}
	var suspects []Partition
	first := map[Partition]map[string]counterDiff{}
	for i, p := range parts {
		if ctx.Err() != nil {
			rep.Skipped += len(parts) - i
			break
		}
		diff, ok, err := d.checkPartition(ctx, p)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				rep.Skipped += len(parts) - i
				break
			}
			return rep, err
		}
		if !ok {
			rep.Skipped++
			continue
		}
		rep.Checked++
		if len(diff) > 0 {
			suspects = append(suspects, p)
			first[p] = diff
		}
	}
	if len(suspects) == 0 {
		return rep, nil
	}
	select {
	case <-ctx.Done():
		return rep, nil
	case <-time.After(d.settle):
	}
	for _, p := range suspects {
		again, ok, err := d.checkPartition(ctx, p)
		if err != nil || !ok {
			continue // unconfirmed: a later run samples it again
		}
		for _, sk := range slices.Sorted(maps.Keys(again)) {
			if was, seen := first[p][sk]; seen && was == again[sk] {
				rep.Drifted = append(rep.Drifted, p.PK()+" "+sk)
			}
		}
	}
	return rep, nil
}

// segments is how many scan segments the table is cut into: about
// DriftSampleItems items each, from DescribeTable's ItemCount (updated by
// DynamoDB about every six hours), within DynamoDB's 1 to 1,000,000.
func segments(items int64) int {
	return int(min(max(1, (items+DriftSampleItems-1)/DriftSampleItems), 1_000_000))
}

// segmentOf is fire's segment among n: the same for every retry of one
// fire, spread over the segments by successive fires.
func segmentOf(fire time.Time, n int) int {
	h := fnv.New64a()
	_, _ = fmt.Fprint(h, fire.UTC().Unix())
	return int(h.Sum64() % uint64(n))
}

// sample reads one scan segment, keys only, and returns the message
// partitions its items belong to (user and public partitions of an
// inbox; tenant items are not counted), at most DriftMaxPartitions, in
// the order found.
func (d *DriftCheck) sample(ctx context.Context, fire time.Time, rep *DriftReport) ([]Partition, error) {
	desc, err := d.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(d.store.table)})
	if err != nil {
		return nil, ddb.Wrap("DescribeTable", err)
	}
	rep.Segments = segments(aws.ToInt64(desc.Table.ItemCount))
	rep.Segment = segmentOf(fire, rep.Segments)
	out, err := d.client.Scan(ctx, &dynamodb.ScanInput{
		TableName: aws.String(d.store.table), Segment: aws.Int32(int32(rep.Segment)), TotalSegments: aws.Int32(int32(rep.Segments)),
		Limit:                    aws.Int32(2 * DriftSampleItems),
		ProjectionExpression:     aws.String("#pk"),
		ExpressionAttributeNames: map[string]string{"#pk": contract.AttrPK},
	})
	if err != nil {
		return nil, ddb.Wrap("Scan", err)
	}
	rep.Scanned = int(out.ScannedCount)
	seen := map[Partition]bool{}
	var parts []Partition
	for _, item := range out.Items {
		pk, ok := item[contract.AttrPK].(*types.AttributeValueMemberS)
		if !ok {
			continue
		}
		p, err := ParsePartition(pk.Value)
		if err != nil || seen[p] {
			continue // a tenant's settings or inbox config, or seen
		}
		seen[p] = true
		if len(parts) == DriftMaxPartitions {
			rep.Skipped++
			continue
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// counterDiff is one counter's stored and counted values.
type counterDiff struct {
	storedPublished, storedRead int64
	counted                     Counts
}

// errTooLarge: a partition holds more than DriftMaxItems items.
var errTooLarge = errors.New("stak: partition too large for the drift check")

// checkPartition recounts p read-only: the counters, the items, the
// counters again. It returns the counters that differ from the items
// (the operator's recount's rule: a missing attribute reads 0, an absent
// counter whose count is 0 is right), and false when p is too large or
// its counters moved between the two reads (a write raced: no verdict).
func (d *DriftCheck) checkPartition(ctx context.Context, p Partition) (map[string]counterDiff, bool, error) {
	before, err := d.store.readCounters(ctx, p)
	if err != nil {
		return nil, false, err
	}
	want, _, err := d.store.countItemsUpTo(ctx, p, DriftMaxItems)
	if errors.Is(err, errTooLarge) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	after, err := d.store.readCounters(ctx, p)
	if err != nil {
		return nil, false, err
	}
	if !maps.Equal(before, after) {
		return nil, false, nil
	}
	diff := map[string]counterDiff{}
	for _, sk := range counterKeys(before, want) {
		cur, w := before[sk], want[sk]
		same := cur.published == w.Published && (p.Public() || cur.read == w.Read)
		if same || !cur.exists && w.Published == 0 && w.Read == 0 {
			continue
		}
		diff[sk] = counterDiff{storedPublished: cur.published, storedRead: cur.read, counted: w}
	}
	return diff, true, nil
}
