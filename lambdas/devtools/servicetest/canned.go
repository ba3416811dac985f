package servicetest

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbcanned"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
)

// canned runs a service's cost cases as benchmarks of the handler's own
// CPU (`make bench`, docs/functions.md). First every case runs once, in
// order, against DynamoDB Local through a handler built by f.handler on a
// client that records its HTTP exchanges (ddbcanned) and its typed SDK
// calls (ddbcanned.Capture). Then each case is a pair of benchmarks,
// canned/<operation>/handler and …/rawsdk, both replaying that case's
// recorded answers: the same request through a new handler, and the
// generic raw twin (ddbcanned.Twin) of what the handler did.
func canned(t testing.TB, f *Faults, cases []ddbrecord.Case) {
	t.Helper()
	b, ok := t.(*testing.B)
	if !ok {
		t.Fatal("servicetest.Canned runs under a benchmark")
	}
	if f.handler == nil {
		b.Fatal("servicetest.Canned: call Serve on the Faults with the service's handler")
	}
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
		if r.Status != c.Status {
			b.Fatalf("%s: %d %s, want %d", c.Operation, r.Status, r.Body, c.Status)
		}
		twin, err := ddbcanned.NewTwin([]byte(c.Body), capture.Calls(), r.Body)
		if err != nil {
			b.Fatalf("%s: %v", c.Operation, err)
		}
		if twin.RespBytes != twin.HandlerRespBytes || twin.Captured > 0 {
			b.Logf("%s: the twin encodes %d response bytes (the handler %d; a shape with every field of a list's objects adds the missing ones) and sends %d attribute maps as captured (their shape marshals differently)", c.Operation, twin.RespBytes, twin.HandlerRespBytes, twin.Captured)
		}
		runs = append(runs, run{c: c, path: path, tape: tr.Tape(), twin: twin})
	}
	for _, r := range runs {
		b.Run("canned/"+r.c.Operation, func(b *testing.B) {
			ddbcanned.PairTape(b, f.base, r.tape,
				func(b *testing.B, c *dynamodb.Client) func() {
					h := f.handler(c)
					return func() {
						if got := apitest.Do(b, h, r.c.Method, r.path, r.c.Body, r.c.Header...); got.Status != r.c.Status {
							b.Fatalf("%d %s, want %d", got.Status, got.Body, r.c.Status)
						}
					}
				},
				func(b *testing.B, c *dynamodb.Client) func() {
					op := r.twin.Op(c)
					return func() {
						if err := op(); err != nil {
							b.Fatal(err)
						}
					}
				})
		})
	}
}
