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
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 404 || resp.Headers["Content-Type"] != "application/json" {
				t.Errorf("response %d %v %s", resp.StatusCode, resp.Headers, resp.Body)
			}
			if got := resp.Headers["X-Request-Id"]; got != "apigw-req-1" {
				t.Errorf("X-Request-Id = %q, want the gateway's", got)
			}
			if seen.ID() != tt.wantCaller {
				t.Errorf("handler saw caller %+v, want %q", seen, tt.wantCaller)
			}
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if len(lines) != 2 {
				t.Fatalf("%d log lines: %s", len(lines), logs.String())
			}
			for _, line := range lines {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				if rec["request_id"] != "apigw-req-1" || str(rec["caller"]) != tt.wantCaller || str(rec["client_request_id"]) != tt.wantClient {
					t.Errorf("log line %s: want request_id apigw-req-1, caller %q, client_request_id %q", line, tt.wantCaller, tt.wantClient)
				}
			}
			if !strings.Contains(lines[1], `"route":"GET /tickets/{id}"`) {
				t.Errorf("access line lacks the route: %s", lines[1])
			}
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
	if want := invocation.Add(-fn.AnswerMargin); !got.Equal(want) {
		t.Errorf("handler deadline %v, want %v", got, want)
	}
}
