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
// which it is dropped and logged as Lambda would after MaximumRetryAttempts.
package poller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynastack/dynastack/lambdas/platform/streams"
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

// API is the part of *dynamodbstreams.Client the poller uses.
type API interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// NewClient returns a DynamoDB Streams client with the region, credentials,
// endpoint and HTTP client of c: DynamoDB Local serves both APIs on one
// endpoint, and in AWS a nil endpoint resolves to the streams endpoint.
func NewClient(c *dynamodb.Client) *dynamodbstreams.Client {
	o := c.Options()
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:           o.Region,
		Credentials:      o.Credentials,
		BaseEndpoint:     o.BaseEndpoint,
		HTTPClient:       o.HTTPClient,
		RetryMaxAttempts: o.RetryMaxAttempts,
		RetryMode:        o.RetryMode,
		AppID:            o.AppID,
	})
}

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
	Client    API
	StreamARN string
	Handler   streams.Handler
	// Start is Latest (default) or TrimHorizon.
	Start Position
	// BatchSize caps records per event; 100 (Lambda's default) when 0.
	BatchSize int32
	// MaxRetries is how often a failing batch is retried before it is
	// dropped; 10 when 0, none when negative.
	MaxRetries int
	// Logger defaults to slog.Default.
	Logger *slog.Logger
}

// Poller reads one stream. It is not safe for concurrent use; Run owns it.
type Poller struct {
	cfg     Config
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
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Poller{cfg: cfg, log: log.With("stream", cfg.StreamARN), shards: map[string]*shard{}}, nil
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
			id := deref(sh.ShardId)
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
			p.shards[id] = &shard{id: id, parent: deref(sh.ParentShardId), iterator: it.ShardIterator, closed: it.ShardIterator == nil}
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
		out, err := p.cfg.Client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: s.iterator, Limit: aws.Int32(p.cfg.BatchSize)})
		var expired *types.ExpiredIteratorException
		if errors.As(err, &expired) {
			return 0, p.renew(ctx, s)
		}
		if err != nil {
			return 0, fmt.Errorf("poller: get records: %w", err)
		}
		s.iterator = out.NextShardIterator
		s.closed = out.NextShardIterator == nil
		s.pending = out.Records
		if len(s.pending) == 0 {
			return 0, nil
		}
	}
	batch := s.pending
	ev := events.DynamoDBEvent{Records: make([]events.DynamoDBEventRecord, len(batch))}
	for i, r := range batch {
		rec, err := EventRecord(r, p.cfg.StreamARN)
		if err != nil {
			return 0, fmt.Errorf("poller: record %s: %w", deref(r.EventID), err)
		}
		ev.Records[i] = rec
	}
	resp, err := p.cfg.Handler(ctx, ev)
	failed := len(batch) // index of the first record to retry
	if err == nil {
		failed = firstFailure(ev.Records, resp)
	}
	if failed == len(batch) && err == nil {
		p.advance(s, batch)
		return len(batch), nil
	}
	p.advance(s, batch[:failed])
	s.attempts++
	if p.cfg.MaxRetries < 0 || s.attempts > p.cfg.MaxRetries {
		p.log.Error("dropping stream records after retries", "shard", s.id, "records", len(s.pending), "attempts", s.attempts, "error", fmt.Sprint(err))
		p.advance(s, s.pending)
		return failed, nil
	}
	p.log.Warn("stream batch failed; will retry", "shard", s.id, "retry_from", failed, "records", len(batch), "attempt", s.attempts, "error", fmt.Sprint(err))
	return failed, nil
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
	s.lastSeq = deref(handled[len(handled)-1].Dynamodb.SequenceNumber)
	s.pending = s.pending[len(handled):]
	if len(s.pending) == 0 {
		s.pending = nil
		s.attempts = 0
	}
}

// renew replaces an expired iterator (15 minutes idle) right after the
// last record seen.
func (p *Poller) renew(ctx context.Context, s *shard) error {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(p.cfg.StreamARN), ShardId: aws.String(s.id), ShardIteratorType: TrimHorizon}
	if s.lastSeq != "" {
		in.ShardIteratorType = types.ShardIteratorTypeAfterSequenceNumber
		in.SequenceNumber = aws.String(s.lastSeq)
	}
	it, err := p.cfg.Client.GetShardIterator(ctx, in)
	if err != nil {
		return fmt.Errorf("poller: renew iterator: %w", err)
	}
	s.iterator = it.ShardIterator
	s.closed = it.ShardIterator == nil
	return nil
}
