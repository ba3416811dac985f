package ddb

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// ErrUnavailable: DynamoDB could not serve the request now, after the
// client's own retries: it throttled (the table's on-demand maximum, the
// account's request limit), failed on its side (InternalServerError,
// ServiceUnavailable), could not be reached, or the caller's deadline ran
// out first. Retrying later can succeed, so it is never the caller's
// fault and never a bug: the HTTP layer answers 503 with Retry-After and
// workers hand the record back for a later delivery.
var ErrUnavailable = errors.New("ddb: unavailable, retry later")

// RetryAfter is the wait an answer of ErrUnavailable suggests: the
// client's own retries already spent about this long backing off.
const RetryAfter = 2 * time.Second

// unavailableCodes are the error codes DynamoDB answers when it cannot
// serve a request now, as the SDK reports them (the cancellation reasons
// of a transaction use the short forms).
var unavailableCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ProvisionedThroughputExceeded":          true,
	"ThrottlingException":                    true,
	"ThrottlingError":                        true,
	"RequestLimitExceeded":                   true,
	"InternalServerError":                    true,
	"ServiceUnavailable":                     true,
	"ServiceUnavailableException":            true,
}

// IsUnavailable reports whether err means DynamoDB could not serve the
// request now (ErrUnavailable, or an SDK error of that kind anywhere in
// the chain: a throttle, a server error, a transport failure, a deadline).
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) && unavailableCodes[api.ErrorCode()] {
		return true
	}
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		for _, r := range tc.CancellationReasons {
			if r.Code != nil && unavailableCodes[*r.Code] {
				return true
			}
		}
	}
	// The request never got an answer: refused, reset or timed out
	// connections.
	var send *smithyhttp.RequestSendError
	var netErr net.Error
	return errors.As(err, &send) || errors.As(err, &netErr)
}
