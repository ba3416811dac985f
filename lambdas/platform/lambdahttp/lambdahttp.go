// Package lambdahttp runs a net/http handler as a Lambda function behind an
// API Gateway HTTP API (payload format 2.0).
package lambdahttp

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Main is the whole main of a service's Lambda function: JSON logs on
// stdout, the handler built once per execution environment (outside the
// invocation, so warm invocations reuse its client and connections), then
// Start. A configuration error is logged and exits 1, which Lambda reports
// as a failed init.
func Main(service string, build func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (http.Handler, error)) {
	log := logx.New(os.Stdout, slog.LevelInfo).With("service", service)
	logx.SetDefault(log)
	h, err := build(context.Background(), os.Getenv)
	if err != nil {
		log.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	Start(h)
}

// Start serves h for API Gateway v2 events; it does not return.
func Start(h http.Handler) {
	lambda.Start(httpadapter.NewV2(Handler(h)).ProxyWithContext)
}

// Handler makes the API Gateway request id the request id of h, so the
// service's log lines and the gateway's access log share one id; a
// client's own X-Request-Id is logged beside it as client_request_id
// (api.Instrument), never in its place.
//
// It also passes on who the gateway authorized, as the request's
// api.Caller: the IAM ARN of a SigV4 route (authorizer.iam.userArn) or the
// claims of a JWT route (authorizer.jwt.claims, which the gateway has
// verified: signature, issuer, audience, exp, nbf).
func Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
