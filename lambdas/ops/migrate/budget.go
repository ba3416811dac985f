package migrate

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// bucket is a token bucket of capacity units per second whose rate adapts
// to throttling: each throttle halves it (down to minShare of the budget),
// each success gives back a little (additive increase), so a table or
// account at its limit is eased off rather than hammered. It may run into
// debt by one request (a Scan page's units are known only after it), and
// the next request waits the debt off.
type bucket struct {
	mu     sync.Mutex
	budget float64 // units per second the caller allowed
	share  float64 // the part of the budget in use now, (minShare, 1]
	tokens float64
	last   time.Time
	now    func() time.Time
}

const (
	// minShare is the least share of the budget a run keeps under
	// throttling: 5%.
	minShare = 0.05
	// recoverStep is what each success gives back to the share.
	recoverStep = 0.02
	// maxBackoff bounds the wait after one throttle.
	maxBackoff = 5 * time.Second
)

func newBucket(budget float64, now func() time.Time) *bucket {
	return &bucket{budget: budget, share: 1, tokens: budget, last: now(), now: now}
}

func (b *bucket) rate() float64 { return b.budget * b.share }

// refill adds what the time since the last refill earned, up to one
// second's worth of the current rate (the burst). Called with mu held.
func (b *bucket) refill() {
	t := b.now()
	b.tokens = min(b.tokens+t.Sub(b.last).Seconds()*b.rate(), b.rate())
	b.last = t
}

// take waits until the bucket is out of debt, then takes units.
func (b *bucket) take(ctx context.Context, units float64) error {
	for {
		b.mu.Lock()
		b.refill()
		if b.tokens >= 0 {
			b.tokens -= units
			b.mu.Unlock()
			return nil
		}
		wait := time.Duration(-b.tokens / b.rate() * float64(time.Second))
		b.mu.Unlock()
		if err := sleep(ctx, max(wait, time.Millisecond)); err != nil {
			return err
		}
	}
}

// adjust corrects an estimate taken before a request by what it consumed.
func (b *bucket) adjust(delta float64) {
	b.mu.Lock()
	b.tokens -= delta
	b.mu.Unlock()
}

// throttled halves the rate; success recovers it.
func (b *bucket) throttled() {
	b.mu.Lock()
	b.refill()
	b.share = max(b.share/2, minShare)
	b.tokens = min(b.tokens, 0)
	b.mu.Unlock()
}

func (b *bucket) success() {
	b.mu.Lock()
	b.share = min(b.share+recoverStep, 1)
	b.mu.Unlock()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Usage is what a run consumed and how often DynamoDB throttled it.
type Usage struct {
	ReadUnits, WriteUnits float64
	Throttles             int
}

// Budgeted is a DynamoDB client held to a capacity budget: every request
// waits for its units in the read or write bucket, asks DynamoDB what it
// consumed (ReturnConsumedCapacity) and is charged that (a write whose
// condition failed, which DynamoDB bills without saying so, is charged
// what it is billed: refusedUnits); a throttle
// (ProvisionedThroughputExceeded, ThrottlingException, RequestLimitExceeded)
// halves the bucket's rate and is retried after a jittered wait, however
// often, until the context ends. Give it a client without retries of its
// own (NoRetries), or the SDK's would hide the throttles. Migrations reach
// DynamoDB only through it (Env.Client), stores built on it included.
type Budgeted struct {
	client      *dynamodb.Client
	read, write *bucket

	mu    sync.Mutex
	usage Usage
}

var _ ddb.API = (*Budgeted)(nil)

// NoRetries is the ddb.NewClient option for the client Budgeted wraps.
func NoRetries(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} }

// NewBudgeted wraps client with budgets of read and write units per second.
func NewBudgeted(client *dynamodb.Client, readUnits, writeUnits float64, now func() time.Time) *Budgeted {
	return &Budgeted{client: client, read: newBucket(readUnits, now), write: newBucket(writeUnits, now)}
}

// Usage returns what the client consumed so far.
func (c *Budgeted) Usage() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usage
}

// throttle codes: the answers that mean "too fast", which back off. Other
// unavailable answers (a 500) are retried too, without lowering the rate.
var throttleCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
}

func isThrottle(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && throttleCodes[api.ErrorCode()] {
		return true
	}
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		for _, r := range tc.CancellationReasons {
			if r.Code != nil && (throttleCodes[*r.Code] || *r.Code == "ThrottlingError" || *r.Code == "ProvisionedThroughputExceeded") {
				return true
			}
		}
	}
	return false
}

// do runs call within b's budget: est units taken first, corrected by
// what call reports it consumed (est again when DynamoDB reports nothing).
func do[T any](ctx context.Context, c *Budgeted, b *bucket, write bool, est float64, call func() (T, []types.ConsumedCapacity, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		if err := b.take(ctx, est); err != nil {
			var zero T
			return zero, err
		}
		out, consumed, err := call()
		used := est
		if len(consumed) > 0 {
			used = 0
			for _, cc := range consumed {
				used += aws.ToFloat64(cc.CapacityUnits)
			}
		}
		if err != nil {
			used = refusedUnits(err, write, est)
		}
		b.adjust(used - est)
		c.mu.Lock()
		if write {
			c.usage.WriteUnits += used
		} else {
			c.usage.ReadUnits += used
		}
		throttled := err != nil && isThrottle(err)
		if throttled {
			c.usage.Throttles++
		}
		c.mu.Unlock()
		if err == nil {
			b.success()
			return out, nil
		}
		if !throttled && !ddb.IsUnavailable(err) || ctx.Err() != nil {
			return out, err
		}
		if throttled {
			b.throttled()
		}
		d := min(50*time.Millisecond<<min(attempt, 10), maxBackoff)
		if err := sleep(ctx, time.Duration(rand.Int64N(int64(d)))+time.Millisecond); err != nil {
			return out, err
		}
	}
}

// refusedUnits is what a request DynamoDB answered with an error cost.
// A throttled or failed request costs nothing. A write whose condition
// failed is billed all the same, by the existing item's size (one write
// unit per KB, at least one), though the error reports no consumed
// capacity: charged the item's size when the error carries it (ALL_OLD),
// else the estimate, so a run whose writes are mostly skipped (racing the
// API, or a second operator) stays within its write budget. A transaction
// cancelled by a condition is charged its estimate likewise.
func refusedUnits(err error, write bool, est float64) float64 {
	if !write || isThrottle(err) {
		return 0
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return max(est, math.Ceil(float64(ddb.ItemSize(ccf.Item))/1024))
	}
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		for _, r := range tc.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" {
				return est
			}
		}
	}
	return 0
}

func one(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

// Scan reads one page within the read budget.
func (c *Budgeted) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	return do(ctx, c, c.read, false, 1, func() (*dynamodb.ScanOutput, []types.ConsumedCapacity, error) {
		out, err := c.client.Scan(ctx, in, opts...)
		if err != nil {
			return nil, nil, err
		}
		return out, one(out.ConsumedCapacity), nil
	})
}

// GetItem reads one item within the read budget.
func (c *Budgeted) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	return do(ctx, c, c.read, false, 1, func() (*dynamodb.GetItemOutput, []types.ConsumedCapacity, error) {
		out, err := c.client.GetItem(ctx, in, opts...)
		if err != nil {
			return nil, nil, err
		}
		return out, one(out.ConsumedCapacity), nil
	})
}

// Query reads one page within the read budget.
func (c *Budgeted) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	return do(ctx, c, c.read, false, 1, func() (*dynamodb.QueryOutput, []types.ConsumedCapacity, error) {
		out, err := c.client.Query(ctx, in, opts...)
		if err != nil {
			return nil, nil, err
		}
		return out, one(out.ConsumedCapacity), nil
	})
}

// PutItem writes within the write budget.
func (c *Budgeted) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	return do(ctx, c, c.write, true, 1, func() (*dynamodb.PutItemOutput, []types.ConsumedCapacity, error) {
		out, err := c.client.PutItem(ctx, in, opts...)
		if err != nil {
			return nil, nil, err
		}
		return out, one(out.ConsumedCapacity), nil
	})
}

// UpdateItem writes within the write budget.
func (c *Budgeted) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	return do(ctx, c, c.write, true, 1, func() (*dynamodb.UpdateItemOutput, []types.ConsumedCapacity, error) {
		out, err := c.client.UpdateItem(ctx, in, opts...)
		if err != nil {
			return nil, nil, err
		}
		return out, one(out.ConsumedCapacity), nil
	})
}

// TransactWriteItems writes within the write budget (two units per item
// estimated: a transaction is billed twice). Its client request token is
// set once, before the first attempt, so a retry after a lost answer is
// the same transaction.
func (c *Budgeted) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	if in.ClientRequestToken == nil {
		in.ClientRequestToken = aws.String(newToken())
	}
	return do(ctx, c, c.write, true, float64(2*len(in.TransactItems)), func() (*dynamodb.TransactWriteItemsOutput, []types.ConsumedCapacity, error) {
		out, err := c.client.TransactWriteItems(ctx, in, opts...)
		if err != nil {
			return nil, nil, err
		}
		return out, out.ConsumedCapacity, nil
	})
}

// DescribeTable is free of capacity, but throttled all the same (the
// control plane's own limit, or a fault injector): it backs off and tries
// again, as the budgeted calls do, since the client has no retries.
func (c *Budgeted) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	for attempt := 0; ; attempt++ {
		out, err := c.client.DescribeTable(ctx, in, opts...)
		if err == nil || !isThrottle(err) && !ddb.IsUnavailable(err) || ctx.Err() != nil {
			return out, err
		}
		c.mu.Lock()
		c.usage.Throttles++
		c.mu.Unlock()
		d := min(50*time.Millisecond<<min(attempt, 10), maxBackoff)
		if err := sleep(ctx, time.Duration(rand.Int64N(int64(d)))+time.Millisecond); err != nil {
			return nil, err
		}
	}
}
