package fn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An API Gateway HTTP API (payload 2.0) event reaches a ServeMux pattern
// with its path value; the API Gateway request id is the request id
// whatever the client sends (the client's own is logged as
// client_request_id), and the caller the gateway authorized (IAM ARN or
// JWT claims) is on every log line and reaches the handler as api.Caller.
func TestAPIGatewayV2(t *testing.T) {
	var seen api.Caller
	route := service.Route{Method: "GET", Path: "/tickets/{id}"}
	rt := api.NewRouter(service.Function{Name: "tickets", Kind: service.HTTP, Routes: []service.Route{route}})
	rt.Handle(route, func(w http.ResponseWriter, r *http.Request) error {
		seen, _ = api.CallerFrom(r.Context())
		api.Logger(r.Context()).InfoContext(r.Context(), "looking up", "id", r.PathValue("id"))
		return api.NotFound("ticket %q not found", r.PathValue("id"))
	})
	var logs bytes.Buffer
	h := fn.HTTPHandler(api.Instrument(logx.New(&logs, slog.LevelInfo), rt))
	adapter := httpadapter.NewV2(h)

	iam := &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: "arn:aws:iam::111122223333:role/host"}}
	jwt := &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": "u1", "tenant": "acme"}}}
	tests := []struct {
		name       string
		headers    map[string]string
		authorizer *events.APIGatewayV2HTTPRequestContextAuthorizerDescription
		wantClient string
		wantCaller string
	}{
		{"no client id", nil, iam, "", "arn:aws:iam::111122223333:role/host"},
		{"client correlation id", map[string]string{"x-correlation-id": "client-7"}, iam, "client-7", "arn:aws:iam::111122223333:role/host"},
		{"client request id", map[string]string{"x-request-id": "client-8"}, jwt, "client-8", "u1"},
		// Not sane (a space, a control character, too long): not logged.
		{"request id with space", map[string]string{"x-request-id": "two words"}, nil, "", ""},
		{"correlation id with newline", map[string]string{"x-correlation-id": "a\nb"}, nil, "", ""},
		{"both not sane", map[string]string{"x-request-id": strings.Repeat("x", 129), "x-correlation-id": "\x01"}, nil, "", ""},
		{"sane correlation id beside a bad request id", map[string]string{"x-request-id": "bad id", "x-correlation-id": "corr-9"}, nil, "corr-9", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			seen = api.Caller{}
			ev := events.APIGatewayV2HTTPRequest{
				Version: "2.0", RouteKey: "GET /tickets/{id}", RawPath: "/tickets/abc", Headers: tt.headers,
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					RequestID: "apigw-req-1", Stage: "$default", Authorizer: tt.authorizer,
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/tickets/abc"},
				},
			}
			resp, err := adapter.ProxyWithContext(context.Background(), ev)
			require.NoError(t, err)
			assert.Equal(t, 404, resp.StatusCode, "response status (body %s)", resp.Body)
			assert.Equal(t, "application/json", resp.Headers["Content-Type"], "response Content-Type")
			assert.Equal(t, "apigw-req-1", resp.Headers["X-Request-Id"], "X-Request-Id: the gateway's")
			assert.Equal(t, tt.wantCaller, seen.ID(), "the caller the handler saw (%+v)", seen)
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			// The handler's line, the access line and the route's
			// RouteLatency metric line (api.Instrument).
			require.Len(t, lines, 3, "log lines: %s", logs.String())
			for _, line := range lines {
				var rec map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &rec))
				assert.Equal(t, "apigw-req-1", rec["request_id"], "log line %s: request_id", line)
				assert.Equal(t, tt.wantCaller, str(rec["caller"]), "log line %s: caller", line)
				assert.Equal(t, tt.wantClient, str(rec["client_request_id"]), "log line %s: client_request_id", line)
			}
			assert.Contains(t, lines[1], `"route":"GET /tickets/{id}"`, "access line lacks the route")
			assert.Contains(t, lines[2], `"RouteLatency":`, "the route's latency metric line")
		})
	}
}

func str(v any) string { s, _ := v.(string); return s }

// The handler's deadline is the invocation's less AnswerMargin, so a
// DynamoDB call that runs out of time leaves room to answer 503.
func TestDeadlineKeepsTimeToAnswer(t *testing.T) {
	var got time.Time
	h := fn.HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = r.Context().Deadline()
	}))
	invocation := time.Now().Add(3 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), invocation)
	defer cancel()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	want := invocation.Add(-fn.AnswerMargin)
	assert.True(t, got.Equal(want), "handler deadline %v, want %v", got, want)
}
