// Package poller feeds a DynamoDB stream to a Lambda-style consumer outside
// Lambda: it reads the stream from DynamoDB Local with the DynamoDB Streams
// API, converts each batch to the events.DynamoDBEvent that an event source
// mapping would deliver, and retries what the consumer reports as failed.
// Tests and the local runner thereby run the very consumer code that Lambda
// runs. It is dev-only: a Lambda binary gets its records from the event
// source mapping and must not link the DynamoDB Streams client.
//
// The retry rules follow an event source mapping with
// ReportBatchItemFailures: a batch is retried from its earliest failed
// record (an error retries all of it), at most MaxRetries times, after
// which it is dropped as Lambda drops it after MaximumRetryAttempts. With
// Bisect (BisectBatchOnFunctionError) a batch whose invocation fails is
// split in two and the halves are retried first, without counting against
// the retries. Records older than MaxRecordAge (MaximumRecordAgeInSeconds)
// are dropped unread. A dropped batch is described to OnFailure in the
// shape of Lambda's on-failure destination record (the records themselves
// are not sent: the destination gets their shard and sequence range).
//
// A shard iterator that fails (expired, pointing into trimmed data, refused)
// is replaced at once rather than retried: after the last record handed
// over, or at the trim horizon when that position is refused, skipping the
// records already handed over. Only records that were trimmed before they
// were read are lost, as with Lambda.
//
// Read DynamoDB Local's streams with the client Streams returns: it mends
// the one way DynamoDB Local's GetRecords answers differ from AWS's that
// the SDK cannot read (an empty map).
package poller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynastack/dynastack/lambdas/ops/streamsapi"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// Position is where a poller starts on the shards open when it starts.
// Shards that appear later are always read from their beginning.
type Position = types.ShardIteratorType

// Start positions, as an event source mapping's StartingPosition.
const (
	Latest      Position = types.ShardIteratorTypeLatest
	TrimHorizon Position = types.ShardIteratorTypeTrimHorizon
)

// ErrNoStream: the table has no stream enabled.
var ErrNoStream = errors.New("poller: table has no stream")

// StreamARN returns the ARN of table's latest stream.
func StreamARN(ctx context.Context, c interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}, table string) (string, error) {
	out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return "", fmt.Errorf("poller: describe table %s: %w", table, err)
	}
	if out.Table == nil || out.Table.LatestStreamArn == nil {
		return "", fmt.Errorf("%w: %s", ErrNoStream, table)
	}
	return *out.Table.LatestStreamArn, nil
}

// Config configures a Poller.
type Config struct {
	Client    streamsapi.API
	StreamARN string
	Handler   fn.StreamHandler
	// Start is Latest (default) or TrimHorizon.
	Start Position
	// BatchSize caps records per event; 100 (Lambda's default) when 0.
	BatchSize int32
	// MaxRetries is how often a failing batch is retried before it is
	// dropped; 10 when 0, none when negative.
	MaxRetries int
	// Filters are the mapping's FilterCriteria patterns: records that
	// match none are dropped before the handler, as Lambda drops them.
	// TTL deletions are given AWS's shape first (asLambdaSees).
	//
	// Default: none, every record is delivered.
	Filters []string
	// Bisect splits a batch whose invocation returns an error in two and
	// retries the first half alone, as BisectBatchOnFunctionError does;
	// splitting does not count as a retry. A reported item failure is not
	// an invocation error: the batch resumes from that record either way.
	//
	// Default: false.
	Bisect bool
	// MaxRecordAge drops records older than this (by their approximate
	// creation time) instead of delivering them, as
	// MaximumRecordAgeInSeconds does; they go to OnFailure with the
	// condition RecordAgeExceeded.
	//
	// Default: 0, records never age out (Lambda's -1).
	MaxRecordAge time.Duration
	// OnFailure receives every batch that is dropped (retries exhausted or
	// records too old), as a mapping's on-failure destination does. An
	// error from it is logged; the shard moves on regardless, as Lambda's
	// does when its destination refuses the record.
	//
	// Default: nil, dropped batches are only logged.
	OnFailure func(context.Context, Failure) error
	// Now is the clock for MaxRecordAge; time.Now when nil.
	Now func() time.Time
	// Logger defaults to slog.Default.
	Logger *slog.Logger
}

// Failure conditions of Lambda's on-failure destination records.
const (
	RetryAttemptsExhausted = "RetryAttemptsExhausted"
	RecordAgeExceeded      = "RecordAgeExceeded"
)

// Failure describes a dropped batch as Lambda's on-failure invocation
// record for a DynamoDB stream does: the condition and the batch's place
// in its shard, so that an operator can read the records again while the
// stream still keeps them.
type Failure struct {
	Condition string
	// Attempts is how often the batch was delivered (Lambda's
	// approximateInvokeCount); 0 for records that aged out unread.
	Attempts int
	// Err is the last invocation error, if the function returned one.
	Err   error
	Batch BatchInfo
}

// BatchInfo is the DDBStreamBatchInfo object of the destination record.
type BatchInfo struct {
	ShardID                         string    `json:"shardId"`
	StartSequenceNumber             string    `json:"startSequenceNumber"`
	EndSequenceNumber               string    `json:"endSequenceNumber"`
	ApproximateArrivalOfFirstRecord time.Time `json:"approximateArrivalOfFirstRecord"`
	ApproximateArrivalOfLastRecord  time.Time `json:"approximateArrivalOfLastRecord"`
	BatchSize                       int       `json:"batchSize"`
	StreamARN                       string    `json:"streamArn"`
}

// Record is the JSON body Lambda sends to an on-failure destination for a
// stream batch (a subset: the fields a reader of the queue acts on).
func (f Failure) Record(functionARN string, at time.Time) ([]byte, error) {
	fnErr := ""
	if f.Err != nil {
		fnErr = "Unhandled"
	}
	return json.Marshal(map[string]any{
		"version":   "1.0",
		"timestamp": at.UTC().Format(time.RFC3339Nano),
		"requestContext": map[string]any{
			"functionArn": functionARN, "condition": f.Condition, "approximateInvokeCount": f.Attempts,
		},
		"responseContext":    map[string]any{"statusCode": 200, "executedVersion": "$LATEST", "functionError": fnErr},
		"DDBStreamBatchInfo": f.Batch,
	})
}

// Poller reads one stream. It is not safe for concurrent use; Run owns it.
type Poller struct {
	cfg     Config
	filters []filter
	log     *slog.Logger
	shards  map[string]*shard
	started bool
}

type shard struct {
	id, parent string
	iterator   *string
	closed     bool // no further GetRecords; done once pending is empty
	pending    []types.Record
	lastSeq    string // last record handed over or dropped
	attempts   int
	// window caps the next delivery after a bisected failure; 0: the
	// batch size.
	window int
	// stale: the iterator failed and could not be replaced yet.
	stale bool
	// skipThrough: after a TRIM_HORIZON repositioning, records up to this
	// sequence number were handed over already.
	skipThrough string
}

func (s *shard) done() bool { return s.closed && len(s.pending) == 0 }

// New returns a poller; it reads nothing until Poll or Run.
func New(cfg Config) (*Poller, error) {
	if cfg.Client == nil || cfg.Handler == nil || cfg.StreamARN == "" {
		return nil, errors.New("poller: Config needs Client, StreamARN and Handler")
	}
	if cfg.Start == "" {
		cfg.Start = Latest
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 100
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 10
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	filters, err := parseFilters(cfg.Filters)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Poller{cfg: cfg, filters: filters, log: log.With("stream", cfg.StreamARN), shards: map[string]*shard{}}, nil
}

// Run polls every interval until ctx ends. Errors are logged, not fatal: a
// local consumer should survive a restarted DynamoDB Local shard.
func (p *Poller) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := p.Poll(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn("stream poll failed", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync positions the poller without delivering anything: with Latest it
// marks "now", so that records written afterwards are the ones delivered.
// Poll calls it on first use.
func (p *Poller) Sync(ctx context.Context) error {
	if err := p.refresh(ctx); err != nil {
		return err
	}
	p.started = true
	return nil
}

// Poll makes one pass over the stream's shards: every shard with records
// hands one batch to the handler. It returns the number of records the
// handler accepted.
func (p *Poller) Poll(ctx context.Context) (int, error) {
	if !p.started {
		if err := p.Sync(ctx); err != nil {
			return 0, err
		}
	} else if err := p.refresh(ctx); err != nil {
		return 0, err
	}
	ids := make([]string, 0, len(p.shards))
	for id := range p.shards {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var (
		total int
		errs  []error
	)
	for _, id := range ids {
		s := p.shards[id]
		if s.done() {
			continue
		}
		// A child shard's records follow its parent's: wait for the parent.
		if parent, ok := p.shards[s.parent]; ok && !parent.done() {
			continue
		}
		n, err := p.pollShard(ctx, s)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("shard %s: %w", id, err))
		}
	}
	return total, errors.Join(errs...)
}

// refresh learns about shards. Shards known at the first call start at
// cfg.Start; shards that appear later started after the poller did, so
// they are read from their first record.
func (p *Poller) refresh(ctx context.Context) error {
	var start *string
	for {
		out, err := p.cfg.Client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(p.cfg.StreamARN), ExclusiveStartShardId: start})
		if err != nil {
			return fmt.Errorf("poller: describe stream: %w", err)
		}
		if out.StreamDescription == nil {
			return fmt.Errorf("poller: describe stream: no description")
		}
		for _, sh := range out.StreamDescription.Shards {
			id := aws.ToString(sh.ShardId)
			if _, known := p.shards[id]; known || id == "" {
				continue
			}
			typ := TrimHorizon
			if !p.started {
				typ = p.cfg.Start
			}
			it, err := p.cfg.Client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
				StreamArn: aws.String(p.cfg.StreamARN), ShardId: aws.String(id), ShardIteratorType: typ,
			})
			if err != nil {
				return fmt.Errorf("poller: shard iterator %s: %w", id, err)
			}
			p.shards[id] = &shard{id: id, parent: aws.ToString(sh.ParentShardId), iterator: it.ShardIterator, closed: it.ShardIterator == nil}
		}
		start = out.StreamDescription.LastEvaluatedShardId
		if start == nil {
			return nil
		}
	}
}

func (p *Poller) pollShard(ctx context.Context, s *shard) (int, error) {
	if len(s.pending) == 0 {
		if s.closed {
			return 0, nil
		}
		if s.stale {
			if err := p.reposition(ctx, s); err != nil {
				return 0, err
			}
			if s.closed {
				return 0, nil
			}
		}
		out, err := p.getRecords(ctx, s)
		if err != nil {
			return 0, err
		}
		s.iterator = out.NextShardIterator
		s.closed = out.NextShardIterator == nil
		s.pending = p.unseen(s, out.Records)
		if len(s.pending) == 0 {
			return 0, nil
		}
	}
	if n, err := p.expire(ctx, s); n > 0 || err != nil || len(s.pending) == 0 {
		return 0, err
	}
	batch := s.pending
	if s.window > 0 && s.window < len(batch) {
		batch = batch[:s.window]
	}
	var ev events.DynamoDBEvent
	var kept []int // the batch index of each record delivered
	for i, r := range batch {
		rec, err := streamsapi.EventRecord(r, p.cfg.StreamARN)
		if err != nil {
			return 0, fmt.Errorf("poller: record %s: %w", aws.ToString(r.EventID), err)
		}
		if rec = asLambdaSees(rec); keep(p.filters, rec) {
			ev.Records = append(ev.Records, rec)
			kept = append(kept, i)
		}
	}
	if len(ev.Records) == 0 {
		p.advance(s, batch)
		return 0, nil
	}
	resp, err := p.cfg.Handler(ctx, ev)
	// failed: the index of the first record to retry. An invocation error
	// retries the whole batch.
	failed := 0
	if err == nil {
		failed = len(batch)
		if f := firstFailure(ev.Records, resp); f < len(kept) {
			failed = kept[f]
		}
	}
	if failed == len(batch) && err == nil {
		p.advance(s, batch)
		if s.window > 0 {
			s.attempts = 0 // a bisected half went through: the next one is a new batch
		}
		return len(batch), nil
	}
	p.advance(s, batch[:failed])
	if err != nil && p.cfg.Bisect && len(batch) > 1 {
		s.window = (len(batch) + 1) / 2
		p.log.Warn("stream batch failed; bisecting", "shard", s.id, "records", len(batch), "next", s.window, "error", err.Error())
		return 0, nil
	}
	s.attempts++
	if p.cfg.MaxRetries < 0 || s.attempts > p.cfg.MaxRetries {
		rest := batch[failed:]
		p.log.Error("dropping stream records after retries", "shard", s.id, "records", len(rest), "attempts", s.attempts, "error", fmt.Sprint(err))
		p.drop(ctx, s, rest, Failure{Condition: RetryAttemptsExhausted, Attempts: s.attempts, Err: err})
		return failed, nil
	}
	p.log.Warn("stream batch failed; will retry", "shard", s.id, "retry_from", failed, "records", len(batch), "attempt", s.attempts, "error", fmt.Sprint(err))
	return failed, nil
}

// expire drops the records at the head of s that are older than
// MaxRecordAge (records of a shard arrive in order of creation).
func (p *Poller) expire(ctx context.Context, s *shard) (int, error) {
	if p.cfg.MaxRecordAge <= 0 {
		return 0, nil
	}
	oldest := p.cfg.Now().Add(-p.cfg.MaxRecordAge)
	n := 0
	for n < len(s.pending) && aws.ToTime(s.pending[n].Dynamodb.ApproximateCreationDateTime).Before(oldest) {
		n++
	}
	if n == 0 {
		return 0, nil
	}
	p.log.Warn("dropping stream records older than the maximum record age", "shard", s.id, "records", n, "max_age", p.cfg.MaxRecordAge.String())
	p.drop(ctx, s, s.pending[:n], Failure{Condition: RecordAgeExceeded})
	return n, nil
}

// drop moves s past recs (the head of its pending records) and hands
// their description to OnFailure.
func (p *Poller) drop(ctx context.Context, s *shard, recs []types.Record, f Failure) {
	if len(recs) == 0 {
		return
	}
	first, last := recs[0].Dynamodb, recs[len(recs)-1].Dynamodb
	f.Batch = BatchInfo{
		ShardID: s.id, StreamARN: p.cfg.StreamARN, BatchSize: len(recs),
		StartSequenceNumber: aws.ToString(first.SequenceNumber), EndSequenceNumber: aws.ToString(last.SequenceNumber),
		ApproximateArrivalOfFirstRecord: aws.ToTime(first.ApproximateCreationDateTime).UTC(),
		ApproximateArrivalOfLastRecord:  aws.ToTime(last.ApproximateCreationDateTime).UTC(),
	}
	p.advance(s, recs)
	s.attempts = 0
	if p.cfg.OnFailure == nil {
		return
	}
	if err := p.cfg.OnFailure(ctx, f); err != nil {
		p.log.Error("on-failure destination refused a dropped batch", "shard", s.id, "error", err.Error())
	}
}

// getRecords reads the next batch of s. Any error leaves the iterator in
// doubt: expired (15 minutes idle), pointing into trimmed data (records
// past the 24-hour retention, or, in DynamoDB Local, a position its shared
// sequence numbers do not have in this shard), or unusable after a
// restart. Retrying the same iterator repeats the error until it expires,
// which stalled the shard for 15 minutes; so the iterator is positioned
// afresh and read once more, and otherwise at the next poll.
func (p *Poller) getRecords(ctx context.Context, s *shard) (*dynamodbstreams.GetRecordsOutput, error) {
	out, err := p.cfg.Client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: s.iterator, Limit: aws.Int32(p.cfg.BatchSize)})
	if err == nil || ctx.Err() != nil {
		return out, err
	}
	p.log.Warn("stream iterator failed; repositioning", "shard", s.id, "after_sequence_number", s.lastSeq, "error", err.Error())
	s.stale = true
	if rerr := p.reposition(ctx, s); rerr != nil {
		return nil, errors.Join(fmt.Errorf("poller: get records: %w", err), rerr)
	}
	if s.closed {
		return &dynamodbstreams.GetRecordsOutput{}, nil
	}
	out, err = p.cfg.Client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: s.iterator, Limit: aws.Int32(p.cfg.BatchSize)})
	if err != nil {
		s.stale = true
		return nil, fmt.Errorf("poller: get records after repositioning: %w", err)
	}
	return out, nil
}

// unseen drops the records a TRIM_HORIZON repositioning delivers again:
// those at or before the last record handed over. Sequence numbers grow
// within a shard.
func (p *Poller) unseen(s *shard, recs []types.Record) []types.Record {
	if s.skipThrough == "" {
		return recs
	}
	for i, r := range recs {
		if seqAfter(aws.ToString(r.Dynamodb.SequenceNumber), s.skipThrough) {
			s.skipThrough = ""
			return recs[i:]
		}
	}
	return nil
}

// seqAfter reports whether sequence number a comes after b: both are
// decimal strings of up to 40 digits without a sign.
func seqAfter(a, b string) bool {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}

// firstFailure returns the index of the earliest record named in resp, as
// Lambda checkpoints at the lowest failed sequence number. An identifier
// matching no record fails the whole batch, as Lambda does.
func firstFailure(recs []events.DynamoDBEventRecord, resp events.DynamoDBEventResponse) int {
	first := len(recs)
	for _, f := range resp.BatchItemFailures {
		idx := -1
		for i, r := range recs {
			if r.Change.SequenceNumber == f.ItemIdentifier {
				idx = i
				break
			}
		}
		if idx < 0 {
			return 0
		}
		first = min(first, idx)
	}
	return first
}

func (p *Poller) advance(s *shard, handled []types.Record) {
	if len(handled) == 0 {
		return
	}
	s.lastSeq = aws.ToString(handled[len(handled)-1].Dynamodb.SequenceNumber)
	s.pending = s.pending[len(handled):]
	if len(s.pending) == 0 {
		s.pending = nil
		s.attempts = 0
		s.window = 0
	}
}

// reposition gives s a new iterator right after the last record handed
// over, or, when there is none or that position is itself trimmed or
// refused, at the oldest record kept (TRIM_HORIZON), skipping what was
// already handed over. Records trimmed in between are lost, as they are
// for Lambda. A shard that no longer exists is closed.
func (p *Poller) reposition(ctx context.Context, s *shard) error {
	if s.lastSeq != "" {
		it, err := p.cfg.Client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: aws.String(p.cfg.StreamARN), ShardId: aws.String(s.id),
			ShardIteratorType: types.ShardIteratorTypeAfterSequenceNumber, SequenceNumber: aws.String(s.lastSeq),
		})
		if err == nil {
			p.positioned(s, it.ShardIterator, "")
			return nil
		}
		if gone(err) {
			return p.gone(s, err)
		}
		p.log.Warn("stream position after the last record refused; reading from the trim horizon", "shard", s.id, "after_sequence_number", s.lastSeq, "error", err.Error())
	}
	it, err := p.cfg.Client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: aws.String(p.cfg.StreamARN), ShardId: aws.String(s.id), ShardIteratorType: TrimHorizon,
	})
	if gone(err) {
		return p.gone(s, err)
	}
	if err != nil {
		return fmt.Errorf("poller: reposition iterator of %s: %w", s.id, err)
	}
	p.positioned(s, it.ShardIterator, s.lastSeq)
	return nil
}

func (p *Poller) positioned(s *shard, it *string, skipThrough string) {
	s.iterator, s.closed, s.stale, s.skipThrough = it, it == nil, false, skipThrough
}

// gone: the shard aged out of the stream (or the stream was replaced).
func gone(err error) bool {
	var rnf *types.ResourceNotFoundException
	return errors.As(err, &rnf)
}

func (p *Poller) gone(s *shard, err error) error {
	p.log.Warn("stream shard is gone; closing it", "shard", s.id, "error", err.Error())
	s.iterator, s.closed, s.stale = nil, true, false
	return nil
}
