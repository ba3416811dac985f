package rezagent_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// epoch is where test clocks start. It lies years ahead of the real clock on
// purpose: ttl values derived from it are in the real future, so DynamoDB
// Local never deletes a test item, and expiry is decided by the service's
// pinned clock alone.
var epoch = time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC)

// service is the rezagent API on fresh tables created from the dev golden
// template (the schema that deploys).
type service struct {
	servicetest.Service
	clock *apitest.Clock
}

type options struct {
	step       time.Duration // clock step; default 1 ms
	scanBudget int
}

// testEndpoint is the DynamoDB endpoint the tests used, for ExampleStore.
var testEndpoint string

func newService(t testing.TB, opts options) *service {
	t.Helper()
	testEndpoint = testenv.Endpoint(t)
	s := servicetest.Start(t, "rezagent", nil)
	require.NotEmpty(t, s.Table, "rezagent template has %d tables, want 1: %v", len(s.Tables), s.Tables)
	if opts.step == 0 {
		opts.step = time.Millisecond
	}
	c := apitest.NewClock(epoch, opts.step)
	s.H = rezagent.NewHandler(rezagent.Config{Table: s.Table, Stage: "dev", ScanBudget: opts.scanBudget, Common: fn.Common{CursorKey: []byte("test-key"),
		Client: servicetest.FunctionClient(t, "rezagent"), Logger: servicetest.Logger(), Now: c.Now}})
	return &service{Service: s, clock: c}
}

func (s *service) create(t testing.TB, messageType, payload string) rezagent.Message {
	t.Helper()
	r := s.Do(t, contract.CreateMessage.Method, contract.CreateMessage.URL(), `{"message_type":"`+messageType+`","created_by":"scheduler","payload":`+payload+`}`)
	require.Equal(t, http.StatusCreated, r.Status, "create: %s", r.Body)
	var m rezagent.Message
	r.JSON(t, &m)
	return m
}

// put writes an item directly, e.g. in a given status or already expired.
func (s *service) put(t testing.TB, m rezagent.Message) {
	t.Helper()
	item, err := attributevalue.MarshalMap(m)
	require.NoError(t, err)
	_, err = s.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: item})
	require.NoError(t, err)
}

// message is a stored message in status st created at created, expiring
// after the standard retention.
func message(id string, st rezagent.Status, created time.Time) rezagent.Message {
	ts := rezagent.Timestamp(created)
	return rezagent.Message{
		Summary: rezagent.Summary{MessageID: id, CreatedDate: ts, CreatedBy: "scheduler", Stage: "dev", MessageType: "scheduled_hello",
			Status: st, UpdatedDate: ts, CorrelationID: "c0ffee00-0000-4000-8000-000000000000", TTL: created.Add(rezagent.Retention).Unix()},
		Payload: rezagent.Payload{"text": "hello world"},
	}
}

// exists reads the table directly, bypassing the service's expiry rule.
func (s *service) exists(t testing.TB, id string) bool {
	t.Helper()
	key, _ := attributevalue.MarshalMap(map[string]string{"message_id": id})
	out, err := s.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(s.Table), Key: key, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	return len(out.Item) > 0
}

// id returns a fixed, valid message id distinct per (group, n).
func id(group, n int) string { return fmt.Sprintf("3f1d7e3a-%04d-4000-8000-%012d", group, n) }
