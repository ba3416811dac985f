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
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Main is the whole main of a service's Lambda function: JSON logs on
// stdout, the handler built once per execution environment (outside the
// invocation, so warm invocations reuse its client and connections), then
// Start. A configuration error is logged and exits 1, which Lambda reports
// as a failed init.
func Main(service string, build func(ctx context.Context, getenv func(string) string) (http.Handler, error)) {
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

// Handler makes the API Gateway request id the request id of h unless the
// client sent a sane one of its own (api.ValidID), so service logs and API
// Gateway access logs share one id. An id that is not sane is replaced by
// the gateway's, not by a fresh one that no access log line carries.
func Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !api.ValidID(r.Header.Get(api.HeaderRequestID)) && !api.ValidID(r.Header.Get(api.HeaderCorrelationID)) {
			if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.RequestID != "" {
				r.Header.Set(api.HeaderRequestID, rc.RequestID)
			}
		}
		h.ServeHTTP(w, r)
	})
}
