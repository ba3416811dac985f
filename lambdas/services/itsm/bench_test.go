package itsm_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbcanned"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
)

// Each benchmark pairs the HTTP handler (in process: routing, middleware,
// JSON decoding, validation, encoding) with the raw SDK call doing the same
// DynamoDB work, so handler overhead reads as a ratio. Both talk to the
// same DynamoDB Local, whose latency dominates. Each also reports its
// DynamoDB requests and capacity per operation (req/op, RCU/op, WCU/op).
// The canned/ pair runs the same two over recorded DynamoDB answers
// (devtools/ddbcanned): the handler's own CPU beside the SDK's.

// cannedHandler is the handler of s on client c, logging as in Lambda
// (JSON, info level) into io.Discard: its log line is part of its work.
func cannedHandler(b testing.TB, s *service, c *dynamodb.Client) *service {
	cfg := servicetest.Config(b, itsm.ConfigFromEnv, map[string]string{contract.EnvTable: s.Table})
	cfg.Client, cfg.Logger = c, logx.New(io.Discard, slog.LevelInfo)
	r := *s
	r.H = itsm.NewHandler(cfg)
	return &r
}

// do is a canned handler operation: one request, as Lambda serves it
// (servicetest.LambdaOp), that must answer status.
func do(s *service, method, path, body string, status int) func(b *testing.B, c *dynamodb.Client) func() {
	return func(b *testing.B, c *dynamodb.Client) func() {
		return servicetest.LambdaOp(b, cannedHandler(b, s, c).H, method, path, body, nil, status)
	}
}

func ticketFor(caller string) itsm.Ticket {
	now := itsm.Timestamp(timeNow())
	return itsm.Ticket{TicketID: uuid.NewString(), CallerID: caller, IssueDescription: "My laptop won't turn on",
		Status: itsm.StatusOpen, CreatedAt: now, UpdatedAt: now, Comments: []itsm.Comment{}}
}

func BenchmarkCreateTicket(b *testing.B) {
	raw := newService(b, options{})
	s, rec := recorded(b, raw)
	body := `{"caller_id":"sess-poc-user-001","issue_description":"My laptop won't turn on"}`
	rawOp := func(b *testing.B, client *dynamodb.Client) func() {
		cond, _ := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("ticket_id"))).Build()
		return func() {
			// Timed: the assertions only on the failure path.
			item, err := attributevalue.MarshalMap(ticketFor("sess-poc-user-001"))
			if err != nil {
				require.NoError(b, err, "marshal the ticket")
			}
			if _, err := client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: item,
				ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names()}); err != nil {
				require.NoError(b, err, "PutItem")
			}
		}
	}
	servicetest.Twin(b, rec, s.Client, func(b *testing.B) {
		if r := s.Do(b, contract.CreateTicket.Method, contract.CreateTicket.URL(), body); r.Status != 201 {
			require.Equal(b, 201, r.Status, "POST /tickets: status (body %s)", r.Body)
		}
	}, rawOp)
	ddbcanned.Pair(b, s.Client, do(s, contract.CreateTicket.Method, contract.CreateTicket.URL(), body, 201), rawOp)
}

func BenchmarkGetTicket(b *testing.B) {
	raw := newService(b, options{})
	s, rec := recorded(b, raw)
	tk := s.create(b, "sess-poc-user-001", "x")
	rawOp := func(b *testing.B, client *dynamodb.Client) func() {
		key, _ := attributevalue.MarshalMap(map[string]string{"ticket_id": tk.TicketID})
		return func() {
			// Timed: the assertions only on the failure path.
			out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(s.Table), Key: key, ConsistentRead: aws.Bool(true)})
			if err != nil {
				require.NoError(b, err, "GetItem")
			}
			var t itsm.Ticket
			if err := attributevalue.UnmarshalMap(out.Item, &t); err != nil {
				require.NoError(b, err, "unmarshal the ticket")
			}
		}
	}
	servicetest.Twin(b, rec, s.Client, func(b *testing.B) {
		if r := s.Do(b, contract.GetTicket.Method, contract.GetTicket.URL(tk.TicketID), ""); r.Status != 200 {
			require.Equal(b, 200, r.Status, "GET /tickets/{id}: status (body %s)", r.Body)
		}
	}, rawOp)
	ddbcanned.Pair(b, s.Client, do(s, contract.GetTicket.Method, contract.GetTicket.URL(tk.TicketID), "", 200), rawOp)
}

func BenchmarkAddComment(b *testing.B) {
	raw := newService(b, options{})
	s, rec := recorded(b, raw)
	// A fresh ticket every 50 comments keeps both variants under
	// MaxComments and the items the same size on average.
	const perTicket = 50
	var id string
	i := 0
	servicetest.Twin(b, rec, s.Client, func(b *testing.B) {
		if i%perTicket == 0 {
			b.StopTimer()
			id = raw.create(b, "sess-poc-user-001", "x").TicketID
			b.StartTimer()
		}
		i++
		if r := s.Do(b, contract.AddComment.Method, contract.AddComment.URL(id), `{"comment_text":"Tried restarting"}`); r.Status != 201 {
			require.Equal(b, 201, r.Status, "POST /tickets/{id}/comments: status (body %s)", r.Body)
		}
	}, func(b *testing.B, client *dynamodb.Client) func() {
		var key map[string]types.AttributeValue
		i := 0
		return func() {
			if i%perTicket == 0 {
				b.StopTimer()
				key, _ = attributevalue.MarshalMap(map[string]string{"ticket_id": raw.create(b, "sess-poc-user-001", "x").TicketID})
				b.StartTimer()
			}
			i++
			rawComment(b, client, s.Table, key)
		}
	})
	// Over canned answers every comment goes to one ticket: its answer is
	// recorded once.
	id = raw.create(b, "sess-poc-user-001", "x").TicketID
	ddbcanned.Pair(b, s.Client, do(s, contract.AddComment.Method, contract.AddComment.URL(id), `{"comment_text":"Tried restarting"}`, 201),
		func(b *testing.B, client *dynamodb.Client) func() {
			key, _ := attributevalue.MarshalMap(map[string]string{"ticket_id": id})
			return func() { rawComment(b, client, s.Table, key) }
		})
}

// rawComment is AddComment's DynamoDB work through the SDK alone. It is
// timed: its assertions run only on the failure path.
func rawComment(b *testing.B, client *dynamodb.Client, table string, key map[string]types.AttributeValue) {
	{
		{
			now := itsm.Timestamp(timeNow())
			comments := expression.Name("comments")
			expr, err := expression.NewBuilder().
				WithUpdate(expression.Set(comments, expression.ListAppend(comments, expression.Value([]itsm.Comment{{CommentText: "Tried restarting", AddedAt: now}}))).
					Set(expression.Name("updated_at"), expression.Value(now))).
				WithCondition(expression.AttributeExists(expression.Name("ticket_id")).
					And(expression.Name("status").NotEqual(expression.Value(itsm.StatusClosed))).
					And(comments.Size().LessThan(expression.Value(itsm.MaxComments)))).
				Build()
			if err != nil {
				require.NoError(b, err, "the comment's expressions")
			}
			out, err := client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key,
				UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(),
				ExpressionAttributeValues: expr.Values(), ReturnValues: types.ReturnValueAllNew})
			if err != nil {
				require.NoError(b, err, "UpdateItem")
			}
			var t itsm.Ticket
			if err := attributevalue.UnmarshalMap(out.Attributes, &t); err != nil {
				require.NoError(b, err, "unmarshal the ticket")
			}
		}
	}
}

func BenchmarkListByCaller(b *testing.B) {
	raw := newService(b, options{})
	s, rec := recorded(b, raw)
	for i := range 25 {
		s.create(b, "sess-poc-user-001", fmt.Sprintf("issue %d", i))
	}
	rawOp := func(b *testing.B, client *dynamodb.Client) func() {
		proj := expression.NamesList(expression.Name("ticket_id"), expression.Name("caller_id"), expression.Name("issue_description"),
			expression.Name("status"), expression.Name("created_at"), expression.Name("updated_at"))
		expr, _ := expression.NewBuilder().WithKeyCondition(expression.Key("caller_id").Equal(expression.Value("sess-poc-user-001"))).WithProjection(proj).Build()
		return func() {
			// Timed: the assertions only on the failure path.
			out, err := client.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(s.Table), IndexName: aws.String("CallerIdIndex"),
				KeyConditionExpression: expr.KeyCondition(), ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(),
				ExpressionAttributeValues: expr.Values(), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(itsm.PageSize + 1)})
			if err != nil {
				require.NoError(b, err, "Query")
			}
			var page []itsm.Summary
			if err := attributevalue.UnmarshalListOfMaps(out.Items, &page); err != nil || len(page) != itsm.PageSize+1 {
				require.NoError(b, err, "unmarshal the page")
				require.Len(b, page, itsm.PageSize+1, "the page: a full one and the next's first")
			}
		}
	}
	servicetest.Twin(b, rec, s.Client, func(b *testing.B) {
		if r := s.Do(b, contract.ListTickets.Method, contract.ListTickets.URLQuery(svc.Values{contract.ParamCaller: "poc-user-001"}), ""); r.Status != 200 {
			require.Equal(b, 200, r.Status, "GET /tickets?caller=: status (body %s)", r.Body)
		}
	}, rawOp)
	ddbcanned.Pair(b, s.Client, do(s, contract.ListTickets.Method, contract.ListTickets.URLQuery(svc.Values{contract.ParamCaller: "poc-user-001"}), "", 200), rawOp)
}
