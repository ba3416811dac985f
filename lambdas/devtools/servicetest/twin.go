package servicetest

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
)

// Twin benchmarks one operation beside its raw SDK twin, both against
// DynamoDB Local, so that the handler's overhead reads as a ratio:
// "handler" runs op once an iteration (a request through the service's
// HTTP handler, whose client rec records), "rawsdk" the function raw
// makes on a client rec records (the SDK calls doing the same DynamoDB
// work). Each reports its DynamoDB requests and capacity per operation.
// ddbcanned.Pair runs the same two over recorded answers.
func Twin(b *testing.B, rec *ddbrecord.Recorder, client *dynamodb.Client, op func(b *testing.B), raw func(b *testing.B, c *dynamodb.Client) func()) {
	b.Helper()
	b.Run("handler", func(b *testing.B) {
		rec.Reset()
		for b.Loop() {
			op(b)
		}
		rec.Report(b, b.N)
	})
	b.Run("rawsdk", func(b *testing.B) {
		do := raw(b, rec.Client(client))
		rec.Reset()
		for b.Loop() {
			do()
		}
		rec.Report(b, b.N)
	})
}
