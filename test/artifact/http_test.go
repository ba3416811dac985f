package artifact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/services"
)

// Request is one HTTP request as API Gateway (HTTP API, payload format 2.0)
// hands it to a function.
type Request struct {
	Method, Path, Query string
	// Headers as API Gateway sends them: lower-case names, repeated
	// headers joined with commas.
	Headers map[string]string
	Body    []byte
	// Base64 sends the body base64-encoded, as API Gateway does for
	// content it does not treat as text.
	Base64  bool
	Cookies []string
	// Authorizer is the request context's authorizer (IAM or JWT); nil
	// for a route without one.
	Authorizer *events.APIGatewayV2HTTPRequestContextAuthorizerDescription
	// Trace is the invocation's X-Ray trace header ("" none): Lambda's
	// active tracing starts a trace for an HTTP API's invocation.
	Trace string
}

var gatewayIDs atomic.Int64

// Event returns the API Gateway event of r and its gateway request id.
func (r Request) Event() (events.APIGatewayV2HTTPRequest, string) {
	id := fmt.Sprintf("Ab1Cd2Ef3gAEJ%03d=", gatewayIDs.Add(1))
	body := string(r.Body)
	if r.Base64 {
		body = base64.StdEncoding.EncodeToString(r.Body)
	}
	headers := map[string]string{"host": "abc123.execute-api.us-east-1.amazonaws.com", "user-agent": "artifact-test"}
	if len(r.Body) > 0 {
		headers["content-length"] = fmt.Sprint(len(r.Body))
	}
	for k, v := range r.Headers {
		headers[strings.ToLower(k)] = v
	}
	now := time.Now()
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: r.Path, RawQueryString: r.Query,
		Cookies: r.Cookies, Headers: headers, Body: body, IsBase64Encoded: r.Base64,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: "$default", AccountID: "123456789012", Stage: "$default", RequestID: id,
			APIID: "abc123", DomainName: "abc123.execute-api.us-east-1.amazonaws.com", DomainPrefix: "abc123",
			Time: now.UTC().Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
			Authorizer: r.Authorizer,
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: r.Method, Path: r.Path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.9", UserAgent: "artifact-test",
			},
		},
	}, id
}

// Response is a function's answer, decoded as API Gateway reads it.
type Response struct {
	events.APIGatewayV2HTTPResponse
	GatewayID string // the request id of the event
	JSON      map[string]any
}

// Do sends r to the function and decodes its answer; the function's body
// must be JSON whatever the status.
func (l *Lambda) Do(t *testing.T, r Request) Response {
	t.Helper()
	ev, id := r.Event()
	status, out := l.InvokeTraced(t, ev, r.Trace)
	require.Equal(t, http.StatusOK, status, "%s %s: emulator status: %s\n%s", r.Method, r.Path, out, l.logs.String())
	var resp Response
	require.NoError(t, json.Unmarshal(out, &resp.APIGatewayV2HTTPResponse), "%s %s: answer is not an API Gateway v2 response: %s", r.Method, r.Path, out)
	resp.GatewayID = id
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		body, err = base64.StdEncoding.DecodeString(resp.Body)
		require.NoError(t, err)
	}
	require.NoError(t, json.Unmarshal(body, &resp.JSON), "%s %s: %d body is not a JSON object: %s", r.Method, r.Path, resp.StatusCode, body)
	return resp
}

// Header returns a response header by name, whatever its case.
func (r Response) Header(name string) string {
	for k, v := range r.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

func iam(arn string) *events.APIGatewayV2HTTPRequestContextAuthorizerDescription {
	return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{
		AccessKey: "ASIAEXAMPLEKEY", AccountID: "123456789012", CallerID: "AROAEXAMPLE:session",
		UserARN: arn, UserID: "AROAEXAMPLE:session",
	}}
}

func jwt(sub string) *events.APIGatewayV2HTTPRequestContextAuthorizerDescription {
	return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{
		Claims: map[string]string{"sub": sub, "iss": "https://issuer.example.com"}, Scopes: []string{"inbox.read"},
	}}
}

// stakUser is what API Gateway's JWT authorizer passes for a Stak end
// user's verified token.
func stakUser(tenant, uid string) *events.APIGatewayV2HTTPRequestContextAuthorizerDescription {
	return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{
		Claims: map[string]string{"sub": uid, "tenant": tenant, "iss": "https://auth.dev.stak.dynastack.example/", "aud": "stak-dev", "exp": "1900000000"},
	}}
}

const callerARN = "arn:aws:sts::123456789012:assumed-role/ops/alice"

// checkLogs checks every JSON line a function logged: exactly one service
// key, naming the function's service.
func checkLogs(t *testing.T, l *Lambda) []LogRecord {
	t.Helper()
	recs := l.Records()
	require.NotEmpty(t, recs, "%s logged no JSON line:\n%s", l.fn.LogicalID, l.logs.String())
	for _, r := range recs {
		assert.Equal(t, 1, strings.Count(r.Raw, `"service":`), "%s log line: times the service key appears: %s", l.fn.LogicalID, r.Raw)
		assert.Equal(t, l.fn.Service, r.Fields["service"], "%s log line service: %s", l.fn.LogicalID, r.Raw)
	}
	return recs
}

// accessLog finds the function's access log line of a gateway request.
func accessLog(t *testing.T, l *Lambda, requestID string) LogRecord {
	t.Helper()
	return l.WaitRecord(t, "access log request_id "+requestID, func(r LogRecord) bool {
		return r.Fields["msg"] == "request" && r.Fields["request_id"] == requestID
	})
}

// Every HTTP function of the stage answers an API Gateway event: an
// unknown path is a JSON 404 that echoes the gateway's request id, a
// caller's sane X-Request-Id is logged as client_request_id (never taken as
// the request id), and each log line names the service once.
func TestEveryAPIFunction(t *testing.T) {
	s := requireStage(t)
	var names []string
	for _, n := range slices.Sorted(maps.Keys(s.Functions)) {
		fn := s.Functions[n]
		// The HTTP services of the registry; consumers and workers take
		// other events.
		if _, ok := services.Lookup(fn.Service); ok {
			names = append(names, n)
		}
	}
	require.GreaterOrEqual(t, len(names), 5, "API functions %v, want the five services at least", names)
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			l := Start(t, s.RIE, s.QEMU, s.Functions[n])
			resp := l.Do(t, Request{Method: "GET", Path: "/no/such/route", Authorizer: iam(callerARN)})
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, "unknown path: %s", resp.Body)
			assert.True(t, strings.HasPrefix(resp.Header("Content-Type"), "application/json"), "unknown path: Content-Type of %v", resp.Headers)
			assert.Equal(t, resp.GatewayID, resp.Header("X-Request-Id"), "X-Request-Id: the gateway's")
			resp = l.Do(t, Request{Method: "GET", Path: "/no/such/route", Headers: map[string]string{"x-request-id": "trace-7f3a"}})
			assert.Equal(t, resp.GatewayID, resp.Header("X-Request-Id"), "sane caller id: X-Request-Id: the gateway's")
			line := accessLog(t, l, resp.GatewayID)
			assert.Equal(t, "trace-7f3a", line.Fields["client_request_id"], "access log line's client_request_id: %s", line.Raw)
			checkLogs(t, l)
		})
	}
}

// ITSM through the deployed binary: base64 bodies, cookies, repeated
// headers and query parameters, an IAM caller, and a caller id that is
// not sane (docs/schemas/itsm.md, docs/functions.md "HTTP API").
func TestITSM(t *testing.T) {
	s := requireStage(t)
	l := Start(t, s.RIE, s.QEMU, s.Functions["itsm"])

	create := l.Do(t, Request{
		Method: "POST", Path: "/tickets", Base64: true,
		Body:       []byte(`{"caller_id":"sess-poc-user-001","issue_description":"My laptop won't turn on ☕"}`),
		Headers:    map[string]string{"content-type": "application/json", "accept": "application/json,text/plain", "x-request-id": "not sane"},
		Cookies:    []string{"session=abc123", "theme=dark"},
		Authorizer: iam(callerARN),
	})
	require.Equal(t, http.StatusCreated, create.StatusCode, "create: %s", create.Body)
	id, _ := create.JSON["ticket_id"].(string)
	assert.NotEmpty(t, id, "create answered %v: ticket_id", create.JSON)
	assert.Equal(t, "My laptop won't turn on ☕", create.JSON["issue_description"], "create answered %v", create.JSON)
	assert.Equal(t, "open", create.JSON["status"], "create answered %v", create.JSON)
	assert.Empty(t, create.Cookies, "the service set cookies")
	// The caller's id is not sane (a space): the gateway's id, which the
	// access log of API Gateway carries, not a fresh one.
	assert.Equal(t, create.GatewayID, create.Header("X-Request-Id"), "X-Request-Id: the gateway's")
	line := accessLog(t, l, create.GatewayID)
	assert.Equal(t, float64(201), line.Fields["status"], "access log line %s", line.Raw)
	assert.Equal(t, "INFO", line.Fields["level"], "access log line %s", line.Raw)

	get := l.Do(t, Request{Method: "GET", Path: "/tickets/" + id, Headers: map[string]string{"x-correlation-id": "corr-1"}})
	assert.Equal(t, http.StatusOK, get.StatusCode, "get: %v %s", get.Headers, get.Body)
	assert.Equal(t, id, get.JSON["ticket_id"], "get: %s", get.Body)
	assert.Equal(t, get.GatewayID, get.Header("X-Request-Id"), "get: X-Request-Id: the gateway's")
	line = accessLog(t, l, get.GatewayID)
	assert.Equal(t, "corr-1", line.Fields["client_request_id"], "access log line's client_request_id: %s", line.Raw)
	assert.Equal(t, "corr-1", line.Fields["client_correlation_id"], "access log line's client_correlation_id: %s", line.Raw)
	assert.Equal(t, get.GatewayID, line.Fields["correlation_id"], "access log line's correlation_id: ours, not the client's: %s", line.Raw)
	// A header sent twice reaches the function joined with a comma; the
	// adapter splits it again and the first value is the caller's id.
	get = l.Do(t, Request{Method: "GET", Path: "/tickets/" + id, Headers: map[string]string{"x-request-id": "trace-a,trace-b"}})
	assert.Equal(t, http.StatusOK, get.StatusCode, "repeated X-Request-Id: %v", get.Headers)
	assert.Equal(t, get.GatewayID, get.Header("X-Request-Id"), "repeated X-Request-Id: X-Request-Id: the gateway's")
	line = accessLog(t, l, get.GatewayID)
	assert.Equal(t, "trace-a", line.Fields["client_request_id"], "repeated X-Request-Id: access log line's client_request_id: %s", line.Raw)
	comment := l.Do(t, Request{Method: "POST", Path: "/tickets/" + id + "/comments", Base64: true, Body: []byte(`{"comment_text":"Tried restarting"}`)})
	assert.Contains(t, []int{http.StatusCreated, http.StatusOK}, comment.StatusCode, "comment: %s", comment.Body)

	// A parameter given twice is a 400 naming it, not a silent pick.
	list := l.Do(t, Request{Method: "GET", Path: "/tickets", Query: "caller=sess-poc-user-001&caller=other"})
	assert.Equal(t, http.StatusBadRequest, list.StatusCode, "repeated query parameter: %s", list.Body)
	assert.Contains(t, list.Body, "must be given at most once", "repeated query parameter")
	list = l.Do(t, Request{Method: "GET", Path: "/tickets", Query: "caller=sess-poc-user-001"})
	tickets, _ := list.JSON["tickets"].([]any)
	assert.Equal(t, http.StatusOK, list.StatusCode, "list: %s", list.Body)
	assert.Len(t, tickets, 1, "list: %s", list.Body)

	// A base64 body that is not JSON: 400, nothing written.
	bad := l.Do(t, Request{Method: "POST", Path: "/tickets", Base64: true, Body: []byte{0xff, 0xfe, '{'}})
	assert.Equal(t, http.StatusBadRequest, bad.StatusCode, "binary body: %s", bad.Body)
	checkLogs(t, l)
}

// Nucleus attributes writes to the IAM caller's ARN and ignores the
// header then; behind a JWT authorizer (no IAM caller) the X-User-Id header
// is required (docs/schemas/nucleus.md, "Who").
func TestNucleusCaller(t *testing.T) {
	s := requireStage(t)
	l := Start(t, s.RIE, s.QEMU, s.Functions["nucleus"])
	account := func(id string) []byte {
		return []byte(`{"account_id":"` + id + `","account_name":"acct ` + id + `","role_arn":"arn:aws:iam::` + id + `:role/nucleus-executor-artifact"}`)
	}
	auditUser := func(id string) any {
		resp := l.Do(t, Request{Method: "GET", Path: "/audit/account/" + id})
		entries, _ := resp.JSON["entries"].([]any)
		require.Equal(t, http.StatusOK, resp.StatusCode, "audit of %s: %s", id, resp.Body)
		require.Len(t, entries, 1, "audit of %s: %s", id, resp.Body)
		return entries[0].(map[string]any)["user_id"]
	}

	r := l.Do(t, Request{Method: "POST", Path: "/accounts", Body: account("111122223333"), Authorizer: iam(callerARN),
		Headers: map[string]string{"x-user-id": "mallory"}})
	require.Equal(t, http.StatusCreated, r.StatusCode, "IAM create: %s", r.Body)
	assert.Equal(t, callerARN, auditUser("111122223333"), "IAM caller: audit user")

	r = l.Do(t, Request{Method: "POST", Path: "/accounts", Body: account("444455556666"), Authorizer: jwt("user-42")})
	assert.Equal(t, http.StatusBadRequest, r.StatusCode, "JWT caller without X-User-Id: %s", r.Body)
	assert.Contains(t, r.Body, "X-User-Id", "JWT caller without X-User-Id")
	r = l.Do(t, Request{Method: "POST", Path: "/accounts", Body: account("444455556666"), Authorizer: jwt("user-42"),
		Headers: map[string]string{"x-user-id": "alice@example.com"}, Base64: true})
	require.Equal(t, http.StatusCreated, r.StatusCode, "JWT caller with X-User-Id: %s", r.Body)
	assert.Equal(t, "alice@example.com", auditUser("444455556666"), "JWT caller: audit user")
	checkLogs(t, l)
}

// Rezagent's correlation_id is the API Gateway request id whatever the
// caller sends: a caller's X-Correlation-Id could be another caller's
// (issue 29; docs/schemas/rezagent.md).
func TestRezagentCorrelationID(t *testing.T) {
	s := requireStage(t)
	l := Start(t, s.RIE, s.QEMU, s.Functions["rezagent"])
	body := []byte(`{"message_type":"scheduled_hello","created_by":"scheduler","payload":{"text":"hello world"}}`)
	tests := []struct {
		name    string
		headers map[string]string
	}{
		{"caller correlation id", map[string]string{"x-correlation-id": "660e9500-f39c-52e5-b827-557766551111", "x-request-id": "req-1"}},
		{"caller request id", map[string]string{"x-request-id": "req-2"}},
		{"neither sane", map[string]string{"x-correlation-id": "has space", "x-request-id": strings.Repeat("r", 129)}},
		{"none", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := l.Do(t, Request{Method: "POST", Path: "/messages", Body: body, Headers: tt.headers, Authorizer: iam(callerARN)})
			require.Equal(t, http.StatusCreated, r.StatusCode, "create: %s", r.Body)
			assert.Equal(t, r.GatewayID, r.JSON["correlation_id"], "correlation_id")
		})
	}
	checkLogs(t, l)
}
