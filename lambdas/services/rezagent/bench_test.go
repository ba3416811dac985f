package rezagent_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbcanned"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
)

// do is a canned handler operation (ddbcanned.Pair): s's handler on
// client c, logging as in Lambda into io.Discard, answering one request
// as Lambda serves it (servicetest.LambdaOp) that must answer status.
func do(s *service, method, path string, status int) func(b *testing.B, c *dynamodb.Client) func() {
	return func(b *testing.B, c *dynamodb.Client) func() {
		return servicetest.LambdaOp(b, cannedHandler(s, c), method, path, "", nil, status)
	}
}

// cannedHandler is s's handler on client c, logging as in Lambda into
// io.Discard.
func cannedHandler(s *service, c *dynamodb.Client) http.Handler {
	return rezagent.NewHandler(rezagent.Config{Table: s.Table, Stage: "dev", Common: fn.Common{CursorKey: []byte("test-key"),
		Client: c, Now: s.clock.Now, Logger: logx.New(io.Discard, slog.LevelInfo)}})
}

// Each benchmark pairs the HTTP handler (in process: routing, middleware,
// validation, expiry check, JSON encoding) with the raw SDK call doing the
// same DynamoDB work, so handler overhead reads as a ratio. Both talk to
// the same DynamoDB Local, whose latency dominates.
//
//	go test ./services/rezagent -run '^$' -bench . -benchtime=200x -benchmem

func BenchmarkGetMessage(b *testing.B) {
	s, rec := recorded(b, newService(b, options{}))
	m := s.create(b, "scheduled_hello", `{"text":"hello world","priority":"default","tags":["scheduled","daily"]}`)
	rawOp := func(b *testing.B, client *dynamodb.Client) func() {
		key, _ := attributevalue.MarshalMap(map[string]string{"message_id": m.MessageID})
		return func() {
			// Timed: the assertions only on the failure path.
			out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(s.Table), Key: key, ConsistentRead: aws.Bool(true)})
			if err != nil {
				require.NoError(b, err, "GetItem")
			}
			var got rezagent.Message
			if err := attributevalue.UnmarshalMap(out.Item, &got); err != nil {
				require.NoError(b, err, "unmarshal the message")
			}
		}
	}
	servicetest.Twin(b, rec, s.Client, func(b *testing.B) {
		if r := s.Do(b, contract.GetMessage.Method, contract.GetMessage.URL(m.MessageID), ""); r.Status != 200 {
			require.Equal(b, 200, r.Status, "GET /messages/{id}: status (body %s)", r.Body)
		}
	}, rawOp)
	ddbcanned.Pair(b, s.Client, do(s, contract.GetMessage.Method, contract.GetMessage.URL(m.MessageID), 200), rawOp)
}

func BenchmarkListMessages(b *testing.B) {
	s, rec := recorded(b, newService(b, options{}))
	for i := range 30 {
		s.create(b, "scheduled_hello", fmt.Sprintf(`{"text":"message %d"}`, i))
	}
	rawOp := func(b *testing.B, client *dynamodb.Client) func() {
		ttl := expression.Name("ttl")
		expr, _ := expression.NewBuilder().
			WithKeyCondition(expression.Key("stage").Equal(expression.Value("dev"))).
			WithFilter(expression.AttributeNotExists(ttl).Or(ttl.GreaterThan(expression.Value(time.Now().Unix())))).
			Build()
		return func() {
			// Timed: the assertions only on the failure path.
			out, err := client.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(s.Table), IndexName: aws.String("stage-created_date-index"),
				KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(), ExpressionAttributeNames: expr.Names(),
				ExpressionAttributeValues: expr.Values(), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(21)})
			if err != nil {
				require.NoError(b, err, "Query")
			}
			var page []rezagent.Summary
			if err := attributevalue.UnmarshalListOfMaps(out.Items, &page); err != nil || len(page) != 21 {
				require.NoError(b, err, "unmarshal the page")
				require.Len(b, page, 21, "the page: a full one and the next's first")
			}
		}
	}
	servicetest.Twin(b, rec, s.Client, func(b *testing.B) {
		if r := s.Do(b, contract.ListMessages.Method, contract.ListMessages.URLQuery(svc.Values{svc.Limit: "20"}), ""); r.Status != 200 {
			require.Equal(b, 200, r.Status, "GET /messages?limit=20: status (body %s)", r.Body)
		}
	}, rawOp)
	ddbcanned.Pair(b, s.Client, do(s, contract.ListMessages.Method, contract.ListMessages.URLQuery(svc.Values{svc.Limit: "20"}), 200), rawOp)
}
