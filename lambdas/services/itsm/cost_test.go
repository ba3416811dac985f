package itsm_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
)

// recorded returns s with a handler whose DynamoDB calls rec records.
func recorded(t testing.TB, s *service) (*service, *ddbrecord.Recorder) {
	t.Helper()
	rec := &ddbrecord.Recorder{}
	cfg := servicetest.Config(t, itsm.ConfigFromEnv, map[string]string{contract.EnvTable: s.Table})
	cfg.Client = rec.Client(s.Client)
	cfg.Logger = slog.New(slog.DiscardHandler)
	r := *s
	r.H = itsm.NewHandler(cfg)
	return &r, rec
}

// TestCost runs the cost cases in each mode (servicetest.Modes: Cost,
// LostAnswers, Throttled). Tickets here are under 1 KB.
func TestCost(t *testing.T) { servicetest.Modes(t, runCost) }

// BenchmarkAPI runs every operation of TestCost through the handler
// beside its raw SDK twin over recorded DynamoDB answers
// (servicetest.Canned; make bench).
func BenchmarkAPI(b *testing.B) { runCost(b, servicetest.Canned) }

func runCost(t testing.TB, mode servicetest.Mode) {
	base := newService(t, options{})
	faults := base.Faults(t, "itsm", mode)
	faults.Serve(func(c *dynamodb.Client) http.Handler { return cannedHandler(t, base, c).H })
	s, rec := recorded(t, base)
	tk := s.create(t, "sess-cost-caller", "My laptop won't turn on")
	for i := range itsm.PageSize {
		s.create(t, "sess-cost-caller", fmt.Sprintf("issue %d", i))
	}
	var first itsm.Page
	s.Do(t, contract.ListTickets.Method, contract.ListTickets.URLQuery(svc.Values{contract.ParamCaller: "sess-cost-caller"}), "").JSON(t, &first)
	id := func() string { return contract.GetTicket.URL(tk.TicketID) }
	write := ddbrecord.Cost{Requests: 1, Write: 2}
	rows := servicetest.Measure(t, s.H, rec, faults, []ddbrecord.Case{
		{Operation: "POST /tickets", Method: contract.CreateTicket.Method, Path: func() string { return contract.CreateTicket.URL() },
			Body: `{"caller_id":"sess-cost-caller","issue_description":"Printer jam"}`, Status: 201, Min: write,
			Note: "one conditional PutItem; CallerIdIndex (ALL) holds a copy: 1 WCU each"},
		{Operation: "GET /tickets/{id}", Method: "GET", Path: id, Status: 200, Min: ddbrecord.Cost{Requests: 1, Read: 1},
			Note: "one strongly consistent GetItem"},
		{Operation: "GET /tickets/{id} (unknown id)", Method: contract.GetTicket.Method, Path: func() string { return contract.GetTicket.URL("00000000-0000-4000-8000-000000000000") },
			Status: 404, Min: ddbrecord.Cost{Requests: 1, Read: 1}, Note: "the GetItem finds nothing and still costs 1 RCU"},
		{Operation: "GET /tickets/{id} (malformed id)", Method: contract.GetTicket.Method, Path: func() string { return contract.GetTicket.URL("not-a-uuid") },
			Status: 404, Note: "refused before DynamoDB"},
		{Operation: "POST /tickets/{id}/comments", Method: contract.AddComment.Method, Path: func() string { return contract.AddComment.URL(tk.TicketID) },
			Body: `{"comment_text":"Tried restarting"}`, Status: 201, Min: write,
			Note: "one conditional UpdateItem (ALL_NEW); the index copy is rewritten: 1 WCU each"},
		{Operation: "PATCH /tickets/{id}", Method: "PATCH", Path: id, Body: `{"status":"in_progress"}`, Status: 200, Min: write,
			Note: "one conditional UpdateItem; the index copy is rewritten"},
		{Operation: "PATCH /tickets/{id} (refused transition)", Method: "PATCH", Path: id, Body: `{"status":"open"}`, Status: 409,
			Min: ddbrecord.Cost{Requests: 1}, Note: "one conditional UpdateItem that fails; the old item (ReturnValuesOnConditionCheckFailure) names the current status at no extra read"},
		{Operation: "GET /tickets?caller= (first page of 10)", Method: contract.ListTickets.Method, Path: func() string {
			return contract.ListTickets.URLQuery(svc.Values{contract.ParamCaller: "sess-cost-caller"})
		},
			Status: 200, Min: ddbrecord.Cost{Requests: 1, Read: 0.5},
			Note: "one eventually consistent Query of 11 index items (the 11th proves a next page), 4 KB or less"},
		{Operation: "GET /tickets?caller= (last page)", Method: contract.ListTickets.Method, Path: func() string { return contract.ListTickets.URL() + "?caller=sess-cost-caller&cursor=" + first.Next },
			Status: 200, Min: ddbrecord.Cost{Requests: 1, Read: 0.5}, Note: "one Query from the cursor"},
	})
	if mode == servicetest.Cost {
		ddbrecord.CheckServiceDoc(t, "itsm", rows)
	}
}
