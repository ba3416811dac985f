package servicetest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/stretchr/testify/require"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbcanned"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
)

// canned runs a service's cost cases as benchmarks of the handler's own
// CPU (`make bench`, docs/functions.md). First every case runs once, in
// order, against DynamoDB Local through a handler built by f.handler on a
// client that records its HTTP exchanges (ddbcanned) and its typed SDK
// calls (ddbcanned.Capture). Then each case is a pair of benchmarks,
// canned/<operation>/handler and …/rawsdk, both replaying that case's
// recorded answers: the same request through a new handler as Lambda runs
// it (LambdaOp), and the generic raw twin (ddbcanned.Twin) of what the
// handler did.
func canned(t testing.TB, f *Faults, cases []ddbrecord.Case) {
	t.Helper()
	b, ok := t.(*testing.B)
	require.True(t, ok, "servicetest.Canned runs under a benchmark")
	require.NotNil(b, f.handler, "servicetest.Canned: call Serve on the Faults with the service's handler")
	tr := ddbcanned.New(f.base.Options().HTTPClient)
	capture := &ddbcanned.Capture{}
	h := f.handler(dynamodb.New(f.base.Options(), capture.Instrument, func(o *dynamodb.Options) { o.HTTPClient = tr }))
	type run struct {
		c    ddbrecord.Case
		path string
		tape ddbcanned.Tape
		twin *ddbcanned.Twin
	}
	var runs []run
	for _, c := range cases {
		path := c.Path() // may prepare through the API first: not recorded
		tr.Record()
		capture.Reset()
		r := apitest.Do(b, h, c.Method, path, c.Body, c.Header...)
		require.Equal(b, c.Status, r.Status, "%s: status (body %s)", c.Operation, r.Body)
		twin, err := ddbcanned.NewTwin([]byte(c.Body), capture.Calls(), r.Body)
		require.NoError(b, err, "%s: the raw twin", c.Operation)
		if twin.RespBytes != twin.HandlerRespBytes || twin.Captured > 0 {
			b.Logf("%s: the twin encodes %d response bytes (the handler %d; a shape with every field of a list's objects adds the missing ones) and sends %d attribute maps as captured (their shape marshals differently)", c.Operation, twin.RespBytes, twin.HandlerRespBytes, twin.Captured)
		}
		runs = append(runs, run{c: c, path: path, tape: tr.Tape(), twin: twin})
	}
	for _, r := range runs {
		b.Run("canned/"+r.c.Operation, func(b *testing.B) {
			ddbcanned.PairTape(b, f.base, r.tape,
				func(b *testing.B, c *dynamodb.Client) func() {
					return LambdaOp(b, f.handler(c), r.c.Method, r.path, r.c.Body, r.c.Header, r.c.Status)
				},
				func(b *testing.B, c *dynamodb.Client) func() {
					op := r.twin.Op(c)
					return func() {
						// Timed: the assertion only on the failure path.
						if err := op(); err != nil {
							require.NoError(b, err, "%s: the raw twin", r.c.Operation)
						}
					}
				})
		})
	}
}

// LambdaOp is one request to h as a function serves it in Lambda: an API
// Gateway (HTTP API, payload 2.0) event through the adapter and
// fn.HTTPHandler that fn.StartHTTP runs, in an invocation context
// with a deadline, the answer an event again. So the handler side pays
// what a request costs there: the event made an http.Request, the
// gateway's request id (no id of its own to make), the response writer,
// and no more (httptest.NewRequest would parse the request from text
// through a 4 KB buffer, which Lambda never does).
func LambdaOp(b *testing.B, h http.Handler, method, target, body string, header []string, status int) func() {
	path, query, _ := strings.Cut(target, "?")
	event := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: path, RawQueryString: query, Body: body, Headers: map[string]string{"content-type": "application/json"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: "api.example.com", RequestID: "bench-0000000000000000",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, SourceIP: "192.0.2.1"}},
	}
	for i := 0; i+1 < len(header); i += 2 {
		event.Headers[strings.ToLower(header[i])] = header[i+1]
	}
	adapter := httpadapter.NewV2(fn.HTTPHandler(h))
	// One invocation's context, as aws-lambda-go makes it: its deadline is
	// what fn.HTTPHandler bounds the request's work by.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	b.Cleanup(cancel)
	return func() {
		resp, err := adapter.ProxyWithContext(ctx, event)
		// Timed: the assertions only on the failure path.
		if err != nil || resp.StatusCode != status {
			require.NoError(b, err, "%s %s", method, target)
			require.Equal(b, status, resp.StatusCode, "%s %s: status (body %s)", method, target, resp.Body)
		}
	}
}
