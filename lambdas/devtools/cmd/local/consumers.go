package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/localqueue"
	"github.com/dynastack/dynastack/lambdas/devtools/localtrace"
	"github.com/dynastack/dynastack/lambdas/devtools/poller"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

const typeEventSourceMapping = "AWS::Lambda::EventSourceMapping"

// streamSource is what an event source mapping tells the local poller.
type streamSource struct {
	table   string // logical id
	start   poller.Position
	batch   int32
	filters []string // FilterCriteria patterns
	bisect  bool
	retries int           // MaximumRetryAttempts; -1 (Lambda's default) is "until the record expires"
	maxAge  time.Duration // MaximumRecordAgeInSeconds; 0 when -1 or unset
	// onFailure is the logical id of the mapping's on-failure SQS queue.
	onFailure string
}

// sourceOf finds the table whose stream feeds fn: the template's event
// source mapping (EventSourceArn Fn::GetAtt [table, StreamArn]) when there
// is one, otherwise the first table with a stream that fn's environment
// refers to.
func sourceOf(ctx context.Context, t *cfntables.Template, fn cfntables.Function, names map[string]string, client *dynamodb.Client) (streamSource, error) {
	ids := make([]string, 0, len(t.Resources))
	for id := range t.Resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := t.Resources[id]
		if r.Type != typeEventSourceMapping {
			continue
		}
		var p struct {
			FunctionName     json.RawMessage `json:"FunctionName"`
			EventSourceArn   json.RawMessage `json:"EventSourceArn"`
			StartingPosition string          `json:"StartingPosition"`
			BatchSize        int32           `json:"BatchSize"`
			FilterCriteria   struct {
				Filters []struct{ Pattern string } `json:"Filters"`
			} `json:"FilterCriteria"`
			Bisect            bool   `json:"BisectBatchOnFunctionError"`
			MaxRetryAttempts  *int   `json:"MaximumRetryAttempts"`
			MaxRecordAgeSecs  *int64 `json:"MaximumRecordAgeInSeconds"`
			DestinationConfig struct {
				OnFailure struct {
					Destination json.RawMessage `json:"Destination"`
				} `json:"OnFailure"`
			} `json:"DestinationConfig"`
		}
		if err := json.Unmarshal(r.Properties, &p); err != nil {
			return streamSource{}, fmt.Errorf("event source mapping %s: %w", id, err)
		}
		var arn struct {
			GetAtt []string `json:"Fn::GetAtt"`
		}
		// The mapping names the function's live alias (or the function).
		if target, ok := t.FunctionOf(p.FunctionName); !ok || target != fn.LogicalID ||
			json.Unmarshal(p.EventSourceArn, &arn) != nil || len(arn.GetAtt) != 2 || arn.GetAtt[1] != "StreamArn" {
			continue
		}
		if _, ok := names[arn.GetAtt[0]]; !ok {
			continue
		}
		src := streamSource{table: arn.GetAtt[0], start: poller.Position(p.StartingPosition), batch: p.BatchSize, bisect: p.Bisect, retries: -1}
		if p.MaxRetryAttempts != nil {
			src.retries = *p.MaxRetryAttempts
		}
		if p.MaxRecordAgeSecs != nil && *p.MaxRecordAgeSecs > 0 {
			src.maxAge = time.Duration(*p.MaxRecordAgeSecs) * time.Second
		}
		if len(p.DestinationConfig.OnFailure.Destination) > 0 {
			var dest struct {
				GetAtt []string `json:"Fn::GetAtt"`
			}
			if json.Unmarshal(p.DestinationConfig.OnFailure.Destination, &dest) != nil || len(dest.GetAtt) != 2 || dest.GetAtt[1] != "Arn" {
				return streamSource{}, fmt.Errorf("%w: event source mapping %s: an on-failure destination other than a queue of the template", cfntables.ErrUnsupported, id)
			}
			src.onFailure = dest.GetAtt[0]
		}
		for _, f := range p.FilterCriteria.Filters {
			src.filters = append(src.filters, f.Pattern)
		}
		return src, nil
	}
	keys := make([]string, 0, len(fn.Env))
	for k := range fn.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		id := fn.Env[k].Ref
		name, ok := names[id]
		if !ok {
			continue
		}
		if _, err := poller.StreamARN(ctx, client, name); err == nil {
			return streamSource{table: id}, nil
		}
	}
	return streamSource{}, fmt.Errorf("function %s: no event source mapping and no table with a stream in its environment", fn.LogicalID)
}

// startConsumer builds the consumer of fn and polls its table's stream
// until ctx ends, feeding it the batches Lambda would.
//
// The mapping's retry attempts, bisection, maximum record age and
// on-failure queue apply as in Lambda: a dropped batch's destination
// record lands on the template's local queue (GET /_local/queues shows its
// depth). Lambda's default of unlimited retries (-1) is 10 here, so that a
// poison record cannot stall a developer's shard for the stream's 24 hours.
func startConsumer(ctx context.Context, log *slog.Logger, al *alarms, ctor fn.StreamConstructor, t *cfntables.Template, fn cfntables.Function, names map[string]string, client *dynamodb.Client, getenv func(string) string, queue func(logicalID string) *localqueue.Queue) (*streamMapping, error) {
	src, err := sourceOf(ctx, t, fn, names, client)
	if err != nil {
		return nil, err
	}
	c, err := ctor(ctx, getenv, ddbrecord.ClientOptions(getenv)...)
	if err != nil {
		return nil, err
	}
	arn, err := poller.StreamARN(ctx, client, names[src.table])
	if err != nil {
		return nil, err
	}
	m := &streamMapping{table: names[src.table], stamps: &stamps{at: map[string]time.Time{}}}
	start := poller.Latest
	if src.start == poller.TrimHorizon {
		start = poller.TrimHorizon
	}
	cfg := poller.Config{
		Client: poller.Streams(client), StreamARN: arn, Start: start, BatchSize: src.batch, Filters: src.filters,
		Bisect: src.bisect, MaxRetries: src.retries, MaxRecordAge: src.maxAge,
		Handler: observeStream(al, localName(t, fn.LogicalID), m.stamps, invokeTraced(c.Handle)), Logger: log.With("function", fn.LogicalID, "service", fn.Service()),
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0 // the poller's default
	} else if cfg.MaxRetries == 0 {
		cfg.MaxRetries = -1 // the poller's "no retries"
	}
	if src.onFailure != "" {
		q := queue(src.onFailure)
		if q == nil {
			return nil, fmt.Errorf("event source mapping of %s: on-failure queue %s is not in the template", fn.LogicalID, src.onFailure)
		}
		fnARN := fmt.Sprintf("arn:aws:lambda:us-east-1:%s:function:%s", cfntables.LocalAccount, fn.LogicalID)
		cfg.OnFailure = func(_ context.Context, f poller.Failure) error {
			body, err := f.Record(fnARN, time.Now())
			if err != nil {
				return err
			}
			q.Send(string(body), nil)
			return nil
		}
	}
	p, err := poller.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := p.Sync(ctx); err != nil {
		return nil, err
	}
	// The stream's own clock: a second reader of the stream, from the
	// same position, that stamps each record when it first appears.
	// DynamoDB stamps ApproximateCreationDateTime to the second;
	// DynamoDB Local rounds it to the minute (docs/schemas/stak.md), which
	// would make an iterator age up to a minute off, 100 alarm minutes
	// on a scaled clock of 3s.
	stamper, err := poller.New(poller.Config{Client: cfg.Client, StreamARN: arn, Start: start, BatchSize: 1000,
		Handler: m.stamps.handle, Logger: cfg.Logger.With("reader", "stamps")})
	if err != nil {
		return nil, err
	}
	if err := stamper.Sync(ctx); err != nil {
		return nil, err
	}
	go stamper.Run(ctx, 250*time.Millisecond)
	go m.run(ctx, p, cfg.Logger, 500*time.Millisecond)
	log.Info("stream consumer started", "service", fn.Service(), "function", fn.LogicalID, "table", names[src.table])
	return m, nil
}

// streamMapping is a stream consumer's event source mapping: its poller
// polls while it is enabled.
type streamMapping struct {
	table    string
	stamps   *stamps
	disabled atomic.Bool
}

// SetEnabled is UpdateEventSourceMapping's Enabled: disabled, the
// mapping reads nothing and invokes nothing (the records wait in the
// stream and age); enabled again, it goes on where it stopped.
func (m *streamMapping) SetEnabled(on bool) { m.disabled.Store(!on) }

func (m *streamMapping) Source() string { return m.table }

func (m *streamMapping) run(ctx context.Context, p *poller.Poller, log *slog.Logger, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if !m.disabled.Load() {
			if _, err := p.Poll(ctx); err != nil && ctx.Err() == nil {
				log.Warn("stream poll failed", "error", err.Error())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stamps are the times the records of a stream were first seen, by
// sequence number: when DynamoDB wrote them, to a quarter second.
type stamps struct {
	mu    sync.Mutex
	at    map[string]time.Time
	prune time.Time
}

// stampsKept: a record older than this is past every alarm's window.
const stampsKept = time.Hour

func (s *stamps) handle(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	now := time.Now()
	for _, r := range ev.Records {
		s.created(r.Change.SequenceNumber, now)
	}
	return events.DynamoDBEventResponse{}, nil
}

// created is when the record seq was first seen: now if never before
// (the consumer's poller read it before the stamper did).
func (s *stamps) created(seq string, now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at, ok := s.at[seq]; ok {
		return at
	}
	s.at[seq] = now
	if now.Sub(s.prune) > stampsKept/10 {
		for k, at := range s.at {
			if now.Sub(at) > stampsKept {
				delete(s.at, k)
			}
		}
		s.prune = now
	}
	return now
}

// observeStream publishes each invocation of a stream consumer as Lambda
// does: Invocations, Errors, Duration, and IteratorAge (the age of the
// batch's last record when the invocation starts: each retry of a failing
// batch publishes a greater one; a disabled mapping, invoking nothing,
// publishes none).
func observeStream(al *alarms, function string, st *stamps, h fn.StreamHandler) fn.StreamHandler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		start := time.Now()
		if n := len(ev.Records); n > 0 {
			al.iteratorAge(function, start.Sub(st.created(ev.Records[n-1].Change.SequenceNumber, start)))
		}
		resp, err := h(ctx, ev)
		al.invocation(function, start, err != nil || ctx.Err() != nil)
		return resp, err
	}
}

// invokeTraced gives each invocation of a stream batch a trace of its own,
// as Lambda's active tracing starts one for an event source mapping's
// invocation (a stream record carries no trace header).
func invokeTraced(h fn.StreamHandler) fn.StreamHandler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return h(logx.WithInvocationTrace(ctx, localtrace.New()), ev)
	}
}
