package rezagent_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
)

// recorded returns s with a handler whose DynamoDB calls rec records.
func recorded(t testing.TB, s *service) (*service, *ddbrecord.Recorder) {
	t.Helper()
	rec := &ddbrecord.Recorder{}
	r := *s
	r.H = rezagent.NewHandler(rezagent.Config{Table: s.Table, Stage: "dev", Common: fn.Common{CursorKey: []byte("test-key"),
		Client: rec.Client(s.Client), Now: s.clock.Now, Logger: slog.New(slog.DiscardHandler)}})
	return &r, rec
}

// TestCost runs the cost cases in each mode (servicetest.Modes: Cost,
// LostAnswers, Throttled). Messages here are under
// 1 KB; both indexes project every attribute.
func TestCost(t *testing.T) { servicetest.Modes(t, runCost) }

// BenchmarkAPI runs every operation of TestCost through the handler
// beside its raw SDK twin over recorded DynamoDB answers
// (servicetest.Canned; make bench).
func BenchmarkAPI(b *testing.B) { runCost(b, servicetest.Canned) }

func runCost(t testing.TB, mode servicetest.Mode) {
	base := newService(t, options{})
	faults := base.Faults(t, "rezagent", mode)
	faults.Serve(func(c *dynamodb.Client) http.Handler { return cannedHandler(base, c) })
	s, rec := recorded(t, base)
	m := s.create(t, "scheduled_hello", `{"text":"hello world"}`)
	for i := range 25 {
		s.create(t, "scheduled_hello", fmt.Sprintf(`{"text":"message %d"}`, i))
	}
	var first rezagent.Page
	s.Do(t, contract.ListMessages.Method, contract.ListMessages.URL(), "").JSON(t, &first)
	id := func() string { return contract.GetMessage.URL(m.MessageID) }
	const statusWrite = "one conditional UpdateItem: the table item, its stage-index copy, and the status-index copy moved to the new status (a delete and a put) "
	rows := servicetest.Measure(t, s.H, rec, faults, []ddbrecord.Case{
		{Operation: "POST /messages", Method: contract.CreateMessage.Method, Path: func() string { return contract.CreateMessage.URL() },
			Body: `{"message_type":"manual_notification","created_by":"ops","payload":{"text":"hi"}}`, Status: 201,
			Min: ddbrecord.Cost{Requests: 1, Write: 3}, Note: "one conditional PutItem; both indexes hold a copy: 1 WCU each"},
		{Operation: "GET /messages/{id}", Method: "GET", Path: id, Status: 200, Min: ddbrecord.Cost{Requests: 1, Read: 1},
			Note: "one strongly consistent GetItem"},
		{Operation: "PATCH /messages/{id} (created → queued)", Method: "PATCH", Path: id, Body: `{"status":"queued"}`, Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Write: 4}, Note: statusWrite},
		{Operation: "PATCH /messages/{id} (queued → processing)", Method: "PATCH", Path: id, Body: `{"status":"processing"}`, Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Write: 4}, Note: statusWrite},
		{Operation: "PATCH /messages/{id} (processing again: a redelivery)", Method: "PATCH", Path: id, Body: `{"status":"processing"}`, Status: 200,
			Min:  ddbrecord.Cost{Requests: 1, Write: 3},
			Note: "a redelivery, the rare path: the first UpdateItem's condition (a status other than processing) fails, and DynamoDB bills that as a write; then one UpdateItem adds 1 to retry_count (the status index copy stays). Reading first would take two requests as well, and leave a race between the read and the write"},
		{Operation: "PATCH /messages/{id} (refused: completed is final)", Method: "PATCH", Path: func() string {
			r := s.Do(t, "PATCH", id(), `{"status":"completed"}`)
			require.Equal(t, 200, r.Status, "complete the message first: status (body %s)", r.Body)
			rec.Reset()
			return id()
		}, Body: `{"status":"failed","error_message":"x"}`, Status: 409, Min: ddbrecord.Cost{Requests: 1},
			Note: "one conditional UpdateItem that fails; the old item (ReturnValuesOnConditionCheckFailure) names the current status"},
		{Operation: "GET /messages (first page of 20)", Method: contract.ListMessages.Method, Path: func() string { return contract.ListMessages.URL() }, Status: 200,
			Min:  ddbrecord.Cost{Requests: 1, Read: 1},
			Note: "one eventually consistent Query of 21 index items (the 21st proves a next page), 4 to 8 KB"},
		{Operation: "GET /messages (next page)", Method: contract.ListMessages.Method, Path: func() string { return contract.ListMessages.URL() + "?cursor=" + first.Next }, Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 0.5}, Note: "one Query from the cursor"},
		{Operation: "GET /metrics", Method: contract.Metrics.Method, Path: func() string { return contract.Metrics.URL() }, Status: 200,
			Min:  ddbrecord.Cost{Requests: 6, Read: 2},
			Note: "five Select=COUNT Queries on the status index, one per status (COUNT reads, and pays for, every item it counts: the cost grows with the window), and one Query for the recent messages, run concurrently; three statuses have no messages here"},
	})
	if mode != servicetest.Cost {
		return // the rows below are reads of the same routes, measured once
	}
	// Where the stage deploys the type index (prod): by type.
	prod := newProdService(t)
	prodRec := &ddbrecord.Recorder{}
	cfg := servicetest.Config(t, rezagent.ConfigFromEnv, prod.Env(t, "rezagent"))
	cfg.Topic, cfg.CursorKey, cfg.Client, cfg.Now, cfg.Logger = "", []byte("test-key"), prodRec.Client(prod.Client), prod.clock.Now, slog.New(slog.DiscardHandler)
	prod.H = rezagent.NewHandler(cfg)
	for i := range 5 {
		prod.create(t, "scheduled_hello", fmt.Sprintf(`{"text":"message %d"}`, i))
		prod.create(t, "manual_notification", fmt.Sprintf(`{"text":"deploy %d"}`, i))
	}
	rows = append(rows, servicetest.Measure(t, prod.H, prodRec, nil, []ddbrecord.Case{
		{Operation: "GET /messages?message_type=… (prod: type index)", Method: contract.ListMessages.Method, Path: func() string {
			return contract.ListMessages.URLQuery(svc.Values{contract.ParamMessageType: "scheduled_hello"})
		}, Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 0.5}, Note: "one eventually consistent Query of the type's partition of message_type-created_date-index"},
		{Operation: "GET /metrics (prod: with by_type)", Method: contract.Metrics.Method, Path: func() string { return contract.Metrics.URL() }, Status: 200,
			Min:  ddbrecord.Cost{Requests: 8, Read: 2},
			Note: "as in dev, plus one Select=COUNT Query of the type index per documented type (scheduled_hello, manual_notification), run concurrently"},
		{Operation: "GET /metrics?message_type=… (prod)", Method: contract.Metrics.Method, Path: func() string {
			return contract.Metrics.URLQuery(svc.Values{contract.ParamMessageType: "manual_notification"})
		}, Status: 200,
			Min:  ddbrecord.Cost{Requests: 2, Read: 1},
			Note: "one Query of the type's partition since, status projected and tallied, and one Query for its recent messages"},
	})...)
	ddbrecord.CheckServiceDoc(t, "rezagent", rows)
}
