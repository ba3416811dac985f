// The client, configured from the environment; sentinel errors with
// predicates in place of SDK exception types; and the item-size arithmetic
// behind the 400 KB item limit.

package ddb

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
)

// An Option adjusts the client NewClient makes, after its environment has.
// Lambda functions pass none; the dev tools pass the recorder of the
// permissions a function's requests need (devtools/ddbrecord), so that
// instrumentation is an argument a caller can see, never a global.
type Option = func(*dynamodb.Options)

// The client's retries, set on purpose rather than left to the SDK's
// defaults (docs/functions.md, "DynamoDB's failure modes"):
//
//   - MaxAttempts: the first attempt and three retries of a throttled,
//     failed or unanswered request, each after a full-jitter exponential
//     wait (BaseBackoff doubled per attempt, at most MaxBackoff: under
//     0.7 s for all three), so a transient fault costs a caller well under
//     a second before it is retried away or answered 503. (The SDK's own
//     jitter backoff waits a flat MaxBackoff once it is capped.)
//   - no client-side retry quota: the SDK's token bucket lets a burst of
//     faults leave every later request of the execution environment with
//     one attempt until it refills, turning an invisible 20% fault rate
//     into errors. DynamoDB's own throttling is the back-pressure.
//   - AttemptTimeout bounds one attempt, so a connection that hangs is
//     retried instead of using up the whole invocation; the invocation's
//     own deadline (the request's context) bounds all attempts together.
const (
	MaxAttempts    = 4
	BaseBackoff    = 50 * time.Millisecond
	MaxBackoff     = time.Second
	AttemptTimeout = 5 * time.Second
)

// backoff is full-jitter exponential backoff: a uniform wait in
// (0, min(BaseBackoff·2^attempt, MaxBackoff)].
type backoff struct{}

func (backoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	d := min(BaseBackoff<<min(attempt, 10), MaxBackoff)
	return time.Duration(rand.Int64N(int64(d))) + 1, nil
}

// NewClient returns a DynamoDB client configured from getenv (os.Getenv in
// production; a map lookup in tests and in the local runner, which is why it
// is a parameter) through awsconf, the loader every AWS client shares: the
// region from AWS_REGION, the endpoint from the SDK's
// AWS_ENDPOINT_URL_DYNAMODB (else AWS_ENDPOINT_URL), and, with an endpoint
// set and no access key, static dummy credentials, as DynamoDB Local needs
// a signature but checks nothing. opts apply last.
func NewClient(ctx context.Context, getenv func(string) string, opts ...Option) (*dynamodb.Client, error) {
	cfg, err := awsconf.Load(ctx, getenv, dynamodb.ServiceID)
	if err != nil {
		return nil, err
	}
	endpoint := awsconf.BaseEndpoint(getenv, dynamodb.ServiceID)
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = MaxAttempts
			so.MaxBackoff = MaxBackoff
			so.Backoff = backoff{}
			so.RateLimiter = ratelimit.None
		})
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(AttemptTimeout)
		if endpoint != nil {
			o.BaseEndpoint = endpoint
			// DynamoDB Local sends X-Amz-Crc32 values that do not match
			// some error bodies, and the SDK logs a warning for each.
			o.DisableValidateResponseChecksum = true
		}
	}, func(o *dynamodb.Options) {
		for _, opt := range opts {
			opt(o)
		}
	}), nil
}
