// HTTP functions: a net/http handler run as a Lambda function behind an
// API Gateway HTTP API (payload format 2.0).

package fn

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// AnswerMargin is the part of an invocation's time kept for writing the
// answer after the handler's work ran out of time.
const AnswerMargin = 500 * time.Millisecond

// StartHTTP serves h for API Gateway v2 events; it does not return.
func StartHTTP(h http.Handler) {
	lambda.Start(httpadapter.NewV2(HTTPHandler(h)).ProxyWithContext)
}

// HTTPHandler makes the API Gateway request id the request id of h, so the
// service's log lines and the gateway's access log share one id; a
// client's own X-Request-Id is logged beside it as client_request_id
// (api.Instrument), never in its place.
//
// It also passes on who the gateway authorized, as the request's
// api.Caller: the IAM ARN of a SigV4 route (authorizer.iam.userArn) or the
// claims of a JWT route (authorizer.jwt.claims, which the gateway has
// verified: signature, issuer, audience, exp, nbf).
func HTTPHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The invocation's deadline, less the time to write an answer,
		// bounds every DynamoDB attempt and retry of the request: a
		// request that runs out answers 503 instead of being cut off by
		// Lambda with a 502 from the gateway.
		if dl, ok := r.Context().Deadline(); ok {
			ctx, cancel := context.WithDeadline(r.Context(), dl.Add(-AnswerMargin))
			defer cancel()
			r = r.WithContext(ctx)
		}
		rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
		if ok && rc.RequestID != "" {
			r = r.WithContext(logx.WithRequestID(r.Context(), rc.RequestID))
		}
		if ok && rc.Authorizer != nil {
			var c api.Caller
			if iam := rc.Authorizer.IAM; iam != nil {
				c.IAM = iam.UserARN
			}
			if jwt := rc.Authorizer.JWT; jwt != nil {
				c.Subject, c.Claims = jwt.Claims["sub"], jwt.Claims
			}
			r = r.WithContext(api.WithCaller(r.Context(), c))
		}
		h.ServeHTTP(w, r)
	})
}
