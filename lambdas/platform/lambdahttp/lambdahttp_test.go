package lambdahttp_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/lambdahttp"
)

// An API Gateway HTTP API (payload 2.0) event reaches a ServeMux pattern
// with its path value, and the API Gateway request id becomes the request
// id unless the client sent one.
func TestAPIGatewayV2(t *testing.T) {
	rt := api.NewRouter()
	rt.Handle("GET /tickets/{id}", func(w http.ResponseWriter, r *http.Request) error {
		return api.NotFound("ticket %q not found", r.PathValue("id"))
	})
	h := lambdahttp.Handler(api.Instrument(slog.New(slog.DiscardHandler), rt))
	adapter := httpadapter.NewV2(h)

	tests := []struct {
		name    string
		headers map[string]string
		wantID  string
	}{
		{"api gateway id", nil, "apigw-req-1"},
		{"client id wins", map[string]string{"x-correlation-id": "client-7"}, "client-7"},
		{"client request id wins", map[string]string{"x-request-id": "client-8"}, "client-8"},
		// Not sane (a space, a control character, too long): the gateway's
		// id, which its access log carries, not a fresh one.
		{"request id with space", map[string]string{"x-request-id": "two words"}, "apigw-req-1"},
		{"correlation id with newline", map[string]string{"x-correlation-id": "a\nb"}, "apigw-req-1"},
		{"both not sane", map[string]string{"x-request-id": strings.Repeat("x", 129), "x-correlation-id": "\x01"}, "apigw-req-1"},
		{"sane correlation id beside a bad request id", map[string]string{"x-request-id": "bad id", "x-correlation-id": "corr-9"}, "corr-9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := events.APIGatewayV2HTTPRequest{
				Version: "2.0", RouteKey: "$default", RawPath: "/tickets/abc", Headers: tt.headers,
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					RequestID: "apigw-req-1", Stage: "$default",
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/tickets/abc"},
				},
			}
			resp, err := adapter.ProxyWithContext(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 404 || resp.Headers["Content-Type"] != "application/json" {
				t.Errorf("response %d %v %s", resp.StatusCode, resp.Headers, resp.Body)
			}
			if got := resp.Headers["X-Request-Id"]; got != tt.wantID {
				t.Errorf("X-Request-Id = %q, want %q", got, tt.wantID)
			}
		})
	}
}
