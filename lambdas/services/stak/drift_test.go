package stak_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	svc "github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

// driftCheck is the drift check on s's table, as the function's own
// client, logging to logs (settle shortened: DynamoDB Local's TTL sweep
// plays no part in these tests).
func (s *service) driftCheck(t *testing.T, logs *bytes.Buffer) *stak.DriftCheck {
	t.Helper()
	cfg := servicetest.Config(t, stak.ConfigFromEnv, map[string]string{stakcontract.EnvTable: s.Table})
	cfg.Client = servicetest.FunctionClient(t, stakcontract.DriftCheck.Name)
	cfg.Logger = servicetest.Logger()
	if logs != nil {
		cfg.Logger = logx.New(logs, slog.LevelInfo).With(svc.MetricDimension, stakcontract.DriftCheck.Name)
	}
	return stak.NewDriftCheckFromConfig(cfg, 50*time.Millisecond)
}

// counter reads a counter item's published and read as stored.
func (s *service) counter(t *testing.T, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := s.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(s.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}})
	require.NoError(t, err, "GetItem %s %s", pk, sk)
	return out.Item
}

// fill publishes to u1 and u2 and to everyone, and marks some read.
func (s *service) fill(t *testing.T) {
	t.Helper()
	s.setup(t)
	for i := range 4 {
		um := s.toUsers(t, fmt.Sprint("u", i), []string{"a", "b"}[i%2], "u1", "u2")
		if i < 2 {
			s.Must(t, 200, stakcontract.MarkRead.Method, stakcontract.MarkRead.URL("acme", "main", "u1", um.Header.ID), "", nil)
		}
		s.toEveryone(t, fmt.Sprint("p", i), "a")
	}
}

var fire = time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC)

// A healthy table: every sampled partition checked, no drift, nothing
// written, and the metric emitted as 0 (the alarm's metric has data).
func TestDriftCheckHealthy(t *testing.T) {
	s := newService(t)
	s.fill(t)
	items := s.Count(t)
	var logs bytes.Buffer
	d := s.driftCheck(t, &logs)
	rep, err := d.Check(context.Background(), fire)
	require.NoError(t, err, "check")
	assert.Empty(t, rep.Drifted, "drifted counters of a healthy table")
	assert.Equal(t, 1, rep.Segments, "a small table is one segment")
	assert.Equal(t, items, rep.Scanned, "the one segment is the whole table")
	assert.Equal(t, 3, rep.Checked, "partitions checked: u1, u2, public")
	assert.Zero(t, rep.Skipped, "partitions skipped")
	assert.Equal(t, items, s.Count(t), "items: the check wrote")

	require.NoError(t, d.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: fire}), "run")
	ms, err := metrics.ParseLines(logs.Bytes())
	require.NoError(t, err, "EMF lines")
	got := metrics.Find(ms, stakcontract.CounterDrift.Name, map[string]string{svc.MetricDimension: stakcontract.DriftCheck.Name})
	require.Len(t, got, 1, "one CounterDrift measurement per run")
	assert.Equal(t, 0.0, metrics.Sum(got), "drift of a healthy table")
	assert.ErrorIs(t, d.Run(context.Background(), fn.ScheduleEvent{}), fn.ErrNoScheduledTime, "a run without its fire time")
}

// A counter edited by hand is found, reported and left as it was (the
// repair is the operator's recount); after the recount the check finds
// nothing.
func TestDriftCheckFindsEditedCounter(t *testing.T) {
	s := newService(t)
	s.fill(t)
	s.breakCounter(t, u1PK, stakcontract.KeyStatsAll, 2, 9)
	s.breakCounter(t, publicPK, stakcontract.KeyStatsAll, 40, -1)
	broken := s.counter(t, u1PK, stakcontract.KeyStatsAll)
	items := s.Count(t)

	var logs bytes.Buffer
	d := s.driftCheck(t, &logs)
	require.NoError(t, d.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: fire}), "run")
	ms, err := metrics.ParseLines(logs.Bytes())
	require.NoError(t, err, "EMF lines")
	assert.Equal(t, 2.0, metrics.Sum(metrics.Find(ms, stakcontract.CounterDrift.Name, map[string]string{svc.MetricDimension: stakcontract.DriftCheck.Name})), "drifted counters emitted")

	rep, err := d.Check(context.Background(), fire)
	require.NoError(t, err, "check")
	assert.Equal(t, []string{publicPK + " c#*", u1PK + " c#*"}, slices.Sorted(slices.Values(rep.Drifted)), "drifted counters")
	assert.Equal(t, broken, s.counter(t, u1PK, stakcontract.KeyStatsAll), "the check changed the counter")
	assert.Equal(t, items, s.Count(t), "items: the check wrote")

	s.recount(t, `{"uid":"u1"}`)
	rep, err = d.Check(context.Background(), fire)
	require.NoError(t, err, "check after the recount")
	assert.Empty(t, rep.Drifted, "drift after the recount")
}

// Runs that overlap (a retry of one fire beside another run) only read:
// each reports the same drift, and the table is as it was.
func TestDriftCheckOverlappingRuns(t *testing.T) {
	s := newService(t)
	s.fill(t)
	s.breakCounter(t, u1PK, "c#a", 7, 0)
	broken := s.counter(t, u1PK, "c#a")
	items := s.Count(t)
	d := s.driftCheck(t, nil)
	var wg sync.WaitGroup
	reports := make([]*stak.DriftReport, 4)
	errs := make([]error, 4)
	for i := range reports {
		wg.Go(func() { reports[i], errs[i] = d.Check(context.Background(), fire) })
	}
	wg.Wait()
	for i, rep := range reports {
		require.NoError(t, errs[i], "run %d", i)
		assert.Equal(t, []string{u1PK + " c#a"}, rep.Drifted, "run %d: drifted", i)
	}
	assert.Equal(t, broken, s.counter(t, u1PK, "c#a"), "the runs changed the counter")
	assert.Equal(t, items, s.Count(t), "items: the runs wrote")
}

// Publishes and marks racing with the check are no drift: a partition
// whose counters move under it is skipped, not reported.
func TestDriftCheckUnderWrites(t *testing.T) {
	s := newService(t)
	s.fill(t)
	d := s.driftCheck(t, nil)
	// The checks run beside the test's goroutine and the publishes on it,
	// so that a failed publish stops the test where require may stop it.
	type result struct {
		drifted int
		err     error
	}
	results := make(chan result, 5)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5 {
			rep, err := d.Check(context.Background(), fire)
			results <- result{len(rep.Drifted), err}
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			close(results)
			for r := range results {
				require.NoError(t, r.err, "check")
				assert.Zero(t, r.drifted, "drift under writes")
			}
			return
		default:
		}
		s.toUsers(t, fmt.Sprint("w", i), "a", "u1", "u2")
	}
}

// A partition with more than stak.DriftMaxItems items is skipped, not
// counted: a run's reads stay bounded whatever one inbox holds (its
// counters, absent here, would otherwise be drift).
func TestDriftCheckSkipsLargePartitions(t *testing.T) {
	s := newService(t)
	s.setup(t)
	var reqs []types.WriteRequest
	flush := func() {
		_, err := s.Client.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.Table: reqs}})
		require.NoError(t, err, "BatchWriteItem")
		reqs = nil
	}
	for i := range stak.DriftMaxItems + 1 {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: u1PK}, "sk": &types.AttributeValueMemberS{Value: fmt.Sprintf("m#%06d", i)},
			"kind": &types.AttributeValueMemberS{Value: "UM"},
		}}})
		if len(reqs) == 25 {
			flush()
		}
	}
	if len(reqs) > 0 {
		flush()
	}
	// The table is now several segments, and a partition's items all
	// hash to one: try successive hours until one samples it.
	d := s.driftCheck(t, nil)
	sampled := false
	for h := range 48 {
		rep, err := d.Check(context.Background(), fire.Add(time.Duration(h)*time.Hour))
		require.NoError(t, err, "check")
		require.Greater(t, rep.Segments, 1, "segments of %d items", stak.DriftMaxItems)
		assert.Empty(t, rep.Drifted, "hour %d: a skipped partition reports no drift", h)
		assert.Zero(t, rep.Checked, "hour %d: partitions checked", h)
		assert.LessOrEqual(t, rep.Scanned, 2*stak.DriftSampleItems, "hour %d: items scanned", h)
		if rep.Skipped > 0 {
			assert.Equal(t, 1, rep.Skipped, "hour %d: the large partition skipped", h)
			sampled = true
			break
		}
	}
	assert.True(t, sampled, "no hour of 48 sampled the large partition")
}
