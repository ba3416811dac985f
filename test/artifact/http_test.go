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
	status, out := l.Invoke(t, ev)
	if status != http.StatusOK {
		t.Fatalf("%s %s: emulator status %d: %s\n%s", r.Method, r.Path, status, out, l.logs.String())
	}
	var resp Response
	if err := json.Unmarshal(out, &resp.APIGatewayV2HTTPResponse); err != nil {
		t.Fatalf("%s %s: answer is not an API Gateway v2 response: %v: %s", r.Method, r.Path, err, out)
	}
	resp.GatewayID = id
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	if err := json.Unmarshal(body, &resp.JSON); err != nil {
		t.Fatalf("%s %s: %d body is not a JSON object: %v: %s", r.Method, r.Path, resp.StatusCode, err, body)
	}
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
	if len(recs) == 0 {
		t.Fatalf("%s logged no JSON line:\n%s", l.fn.LogicalID, l.logs.String())
	}
	for _, r := range recs {
		if n := strings.Count(r.Raw, `"service":`); n != 1 {
			t.Errorf("%s log line has the service key %d times: %s", l.fn.LogicalID, n, r.Raw)
		}
		if r.Fields["service"] != l.fn.Service {
			t.Errorf("%s log line service = %v, want %s: %s", l.fn.LogicalID, r.Fields["service"], l.fn.Service, r.Raw)
		}
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
	if len(names) < 5 {
		t.Fatalf("API functions %v, want the five services at least", names)
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			l := Start(t, s.RIE, s.QEMU, s.Functions[n])
			resp := l.Do(t, Request{Method: "GET", Path: "/no/such/route", Authorizer: iam(callerARN)})
			if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header("Content-Type"), "application/json") {
				t.Errorf("unknown path: %d %v %s", resp.StatusCode, resp.Headers, resp.Body)
			}
			if got := resp.Header("X-Request-Id"); got != resp.GatewayID {
				t.Errorf("X-Request-Id = %q, want the gateway's %q", got, resp.GatewayID)
			}
			resp = l.Do(t, Request{Method: "GET", Path: "/no/such/route", Headers: map[string]string{"x-request-id": "trace-7f3a"}})
			if got := resp.Header("X-Request-Id"); got != resp.GatewayID {
				t.Errorf("sane caller id: X-Request-Id = %q, want the gateway's %q", got, resp.GatewayID)
			}
			if line := accessLog(t, l, resp.GatewayID); line.Fields["client_request_id"] != "trace-7f3a" {
				t.Errorf("access log line without client_request_id trace-7f3a: %s", line.Raw)
			}
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
		Body:       []byte(`{"caller_id":"poc-user-001","issue_description":"My laptop won't turn on ☕"}`),
		Headers:    map[string]string{"content-type": "application/json", "accept": "application/json,text/plain", "x-request-id": "not sane"},
		Cookies:    []string{"session=abc123", "theme=dark"},
		Authorizer: iam(callerARN),
	})
	if create.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", create.StatusCode, create.Body)
	}
	id, _ := create.JSON["ticket_id"].(string)
	if id == "" || create.JSON["issue_description"] != "My laptop won't turn on ☕" || create.JSON["status"] != "open" {
		t.Errorf("create answered %v", create.JSON)
	}
	if len(create.Cookies) != 0 {
		t.Errorf("the service set cookies: %v", create.Cookies)
	}
	// The caller's id is not sane (a space): the gateway's id, which the
	// access log of API Gateway carries, not a fresh one.
	if got := create.Header("X-Request-Id"); got != create.GatewayID {
		t.Errorf("X-Request-Id = %q, want the gateway's %q", got, create.GatewayID)
	}
	line := accessLog(t, l, create.GatewayID)
	if line.Fields["status"] != float64(201) || line.Fields["level"] != "INFO" {
		t.Errorf("access log line %s", line.Raw)
	}

	get := l.Do(t, Request{Method: "GET", Path: "/tickets/" + id, Headers: map[string]string{"x-correlation-id": "corr-1"}})
	if get.StatusCode != http.StatusOK || get.JSON["ticket_id"] != id || get.Header("X-Request-Id") != get.GatewayID {
		t.Errorf("get: %d %v %s", get.StatusCode, get.Headers, get.Body)
	}
	if line := accessLog(t, l, get.GatewayID); line.Fields["client_request_id"] != "corr-1" {
		t.Errorf("access log line without client_request_id corr-1: %s", line.Raw)
	}
	// A header sent twice reaches the function joined with a comma; the
	// adapter splits it again and the first value is the caller's id.
	get = l.Do(t, Request{Method: "GET", Path: "/tickets/" + id, Headers: map[string]string{"x-request-id": "trace-a,trace-b"}})
	if get.StatusCode != http.StatusOK || get.Header("X-Request-Id") != get.GatewayID {
		t.Errorf("repeated X-Request-Id: %d %v", get.StatusCode, get.Headers)
	}
	if line := accessLog(t, l, get.GatewayID); line.Fields["client_request_id"] != "trace-a" {
		t.Errorf("repeated X-Request-Id: access log line without client_request_id trace-a: %s", line.Raw)
	}
	comment := l.Do(t, Request{Method: "POST", Path: "/tickets/" + id + "/comments", Base64: true, Body: []byte(`{"comment_text":"Tried restarting"}`)})
	if comment.StatusCode != http.StatusCreated && comment.StatusCode != http.StatusOK {
		t.Errorf("comment: %d %s", comment.StatusCode, comment.Body)
	}

	// A parameter given twice is a 400 naming it, not a silent pick.
	list := l.Do(t, Request{Method: "GET", Path: "/tickets", Query: "caller=poc-user-001&caller=other"})
	if list.StatusCode != http.StatusBadRequest || !strings.Contains(list.Body, "must be given at most once") {
		t.Errorf("repeated query parameter: %d %s", list.StatusCode, list.Body)
	}
	list = l.Do(t, Request{Method: "GET", Path: "/tickets", Query: "caller=poc-user-001"})
	if tickets, _ := list.JSON["tickets"].([]any); list.StatusCode != http.StatusOK || len(tickets) != 1 {
		t.Errorf("list: %d %s", list.StatusCode, list.Body)
	}

	// A base64 body that is not JSON: 400, nothing written.
	bad := l.Do(t, Request{Method: "POST", Path: "/tickets", Base64: true, Body: []byte{0xff, 0xfe, '{'}})
	if bad.StatusCode != http.StatusBadRequest {
		t.Errorf("binary body: %d %s", bad.StatusCode, bad.Body)
	}
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
		if resp.StatusCode != http.StatusOK || len(entries) != 1 {
			t.Fatalf("audit of %s: %d %s", id, resp.StatusCode, resp.Body)
		}
		return entries[0].(map[string]any)["user_id"]
	}

	r := l.Do(t, Request{Method: "POST", Path: "/accounts", Body: account("111122223333"), Authorizer: iam(callerARN),
		Headers: map[string]string{"x-user-id": "mallory"}})
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("IAM create: %d %s", r.StatusCode, r.Body)
	}
	if got := auditUser("111122223333"); got != callerARN {
		t.Errorf("IAM caller: audit user %v, want %s", got, callerARN)
	}

	r = l.Do(t, Request{Method: "POST", Path: "/accounts", Body: account("444455556666"), Authorizer: jwt("user-42")})
	if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "X-User-Id") {
		t.Errorf("JWT caller without X-User-Id: %d %s", r.StatusCode, r.Body)
	}
	r = l.Do(t, Request{Method: "POST", Path: "/accounts", Body: account("444455556666"), Authorizer: jwt("user-42"),
		Headers: map[string]string{"x-user-id": "alice@example.com"}, Base64: true})
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("JWT caller with X-User-Id: %d %s", r.StatusCode, r.Body)
	}
	if got := auditUser("444455556666"); got != "alice@example.com" {
		t.Errorf("JWT caller: audit user %v, want alice@example.com", got)
	}
	checkLogs(t, l)
}

// Rezagent's correlation_id is the caller's sane X-Correlation-Id, else
// the request id: with neither header sane, the API Gateway request id
// (docs/schemas/rezagent.md).
func TestRezagentCorrelationID(t *testing.T) {
	s := requireStage(t)
	l := Start(t, s.RIE, s.QEMU, s.Functions["rezagent"])
	body := []byte(`{"message_type":"scheduled_hello","created_by":"scheduler","payload":{"text":"hello world"}}`)
	tests := []struct {
		name    string
		headers map[string]string
		want    func(gateway string) string
	}{
		{"caller correlation id", map[string]string{"x-correlation-id": "660e9500-f39c-52e5-b827-557766551111", "x-request-id": "req-1"},
			func(string) string { return "660e9500-f39c-52e5-b827-557766551111" }},
		{"caller request id", map[string]string{"x-request-id": "req-2"}, func(string) string { return "req-2" }},
		{"neither sane", map[string]string{"x-correlation-id": "has space", "x-request-id": strings.Repeat("r", 129)},
			func(gw string) string { return gw }},
		{"none", nil, func(gw string) string { return gw }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := l.Do(t, Request{Method: "POST", Path: "/messages", Body: body, Headers: tt.headers, Authorizer: iam(callerARN)})
			if r.StatusCode != http.StatusCreated {
				t.Fatalf("create: %d %s", r.StatusCode, r.Body)
			}
			if got, want := r.JSON["correlation_id"], tt.want(r.GatewayID); got != want {
				t.Errorf("correlation_id = %v, want %s", got, want)
			}
		})
	}
	checkLogs(t, l)
}
