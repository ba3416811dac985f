package nucleus_test

import (
	"fmt"
	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
)

// cannedHandler is s's handler on client c, logging as in Lambda (JSON,
// info level) into io.Discard.
func cannedHandler(t testing.TB, s *service, cloud *nucleus.Cloud, c *dynamodb.Client) http.Handler {
	cfg := servicetest.Config(t, nucleus.ConfigFromEnv, map[string]string{contract.EnvAppTable: s.tables.App, contract.EnvAuditTable: s.tables.Audit})
	cfg.Client, cfg.Cloud, cfg.Logger = c, cloud, logx.New(io.Discard, slog.LevelInfo)
	return nucleus.NewHandler(cfg)
}

// recorded returns s with a handler whose DynamoDB calls rec records.
func recorded(t testing.TB, s *service, cloud *nucleus.Cloud) (*service, *ddbrecord.Recorder) {
	t.Helper()
	rec := &ddbrecord.Recorder{}
	cfg := servicetest.Config(t, nucleus.ConfigFromEnv, map[string]string{contract.EnvAppTable: s.tables.App, contract.EnvAuditTable: s.tables.Audit})
	cfg.Client = rec.Client(s.Client)
	cfg.Cloud = cloud
	cfg.Logger = slog.New(slog.DiscardHandler)
	r := *s
	r.H = nucleus.NewHandler(cfg)
	return &r, rec
}

// TestCost runs the cost cases in each mode (servicetest.Modes: Cost,
// LostAnswers, Throttled). Items here are under 1 KB;
// both GSI1s project every attribute.
func TestCost(t *testing.T) { servicetest.Modes(t, runCost) }

// BenchmarkAPI runs every operation of TestCost through the handler
// beside its raw SDK twin over recorded DynamoDB answers
// (servicetest.Canned; make bench).
func BenchmarkAPI(b *testing.B) { runCost(b, servicetest.Canned) }

func runCost(t testing.TB, mode servicetest.Mode) {
	fake, cloud := startFakeSTS(t)
	fake.TrustAll()
	base := newService(t, options{})
	faults := base.Faults(t, "nucleus", mode)
	faults.Serve(func(c *dynamodb.Client) http.Handler { return cannedHandler(t, base, cloud, c) })
	s, rec := recorded(t, base, cloud)
	acct := s.createAccount(t, "123456789012", "Dev", "active")
	for i := range 3 {
		s.createAccount(t, fmt.Sprintf("10000000000%d", i), fmt.Sprintf("Acct %d", i), "active")
	}
	sc := s.createSchedule(t, "Office hours")
	s.MustRoute(t, 201, contract.AttachResource, resourceBody(acct.AccountID, ec2ARN(acct.AccountID, 1)), nil, sc.ScheduleID)
	user := []string{nucleus.HeaderUserID, testUser}
	path := func(p string) func() string { return func() string { return p } }
	schedule := path(contract.GetSchedule.URL(sc.ScheduleID))
	rows := servicetest.Measure(t, s.H, rec, faults, []ddbrecord.Case{
		{Operation: "POST /accounts", Method: contract.CreateAccount.Method, Path: path(contract.CreateAccount.URL()), Header: user,
			Body:   `{"account_id":"210987654321","account_name":"Prod","role_arn":"arn:aws:iam::210987654321:role/NucleusRole"}`,
			Status: 201, Min: ddbrecord.Cost{Requests: 1, Write: 8},
			Note: "one TransactWriteItems (Decision: a write and its audit entry together or not at all): the account put only if new, and its audit entry, each with a GSI1 copy; a transaction bills each twice"},
		{Operation: "GET /accounts/{id}", Method: contract.GetAccount.Method, Path: path(contract.GetAccount.URL(acct.AccountID)), Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 1}, Note: "one strongly consistent GetItem"},
		{Operation: "PATCH /accounts/{id}", Method: contract.UpdateAccount.Method, Path: path(contract.UpdateAccount.URL(acct.AccountID)), Header: user,
			Body: `{"account_name":"Development"}`, Status: 200, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 10},
			Note: "a strongly consistent GetItem for the old values, then one TransactWriteItems updating the account (the rename moves its GSI1 copy: a delete and a put) with its audit entry"},
		{Operation: "GET /accounts", Method: contract.ListAccounts.Method, Path: path(contract.ListAccounts.URL()), Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 0.5}, Note: "one eventually consistent Query of GSI1 `TYPE#ACCOUNT`"},
		{Operation: "GET /accounts?status=inactive", Method: contract.ListAccounts.Method, Path: path(contract.ListAccounts.URLQuery(svc.Values{contract.ParamStatus: "inactive"})), Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 0.5}, Note: "the same Query with a status filter"},
		{Operation: "GET /accounts/{id}/resources", Method: contract.AccountResources.Method, Path: path(contract.AccountResources.URL(acct.AccountID)), Status: 200,
			Min: ddbrecord.Cost{Requests: 2, Read: 1.5}, Note: "a GetItem (a 404 for an unknown account), then a Query of GSI1 `ACCOUNT#<id>`"},
		{Operation: "POST /schedules", Method: contract.CreateSchedule.Method, Path: path(contract.CreateSchedule.URL()), Header: user,
			Body:   `{"schedule_name":"Night","start_cron":"0 20 * * *","end_cron":"0 6 * * *","timezone":"UTC","enabled":true}`,
			Status: 201, Min: ddbrecord.Cost{Requests: 1, Write: 8}, Note: "one TransactWriteItems: the schedule and its audit entry, each with a GSI1 copy, billed twice"},
		{Operation: "GET /schedules/{id}", Method: "GET", Path: schedule, Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 1}, Note: "one strongly consistent Query of `pk = SCHEDULE#<id>`: the schedule and its resources"},
		{Operation: "PATCH /schedules/{id}", Method: "PATCH", Path: schedule, Header: user, Body: `{"enabled":false}`, Status: 200,
			Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 8}, Note: "a strongly consistent GetItem for the old values (the audit entry records them; a transaction returns none), then one TransactWriteItems conditioned on the version read, with the audit entry"},
		{Operation: "GET /schedules", Method: contract.ListSchedules.Method, Path: path(contract.ListSchedules.URL()), Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 0.5}, Note: "one eventually consistent Query of GSI1 `TYPE#SCHEDULE`"},
		{Operation: "PUT /schedules/{id}/resources", Method: contract.AttachResource.Method, Path: func() string { return contract.AttachResource.URL(sc.ScheduleID) },
			Header: user, Body: resourceBody(acct.AccountID, ec2ARN(acct.AccountID, 2)), Status: 201,
			Min: ddbrecord.Cost{Requests: 1, Write: 16}, Note: "one TransactWriteItems: the resource (with its GSI1 copy) put only if new, the schedule's `resource_version` and the account's `resource_count` moved (each item has a GSI1 copy), and the audit entry; condition checks would bill 4 WCU less, but then an account delete would need a read of the resources and a schedule delete could miss a racing attach (Decision 22)"},
		{Operation: "PUT /schedules/{id}/resources (already attached)", Method: contract.AttachResource.Method, Path: func() string { return contract.AttachResource.URL(sc.ScheduleID) },
			Header: user, Body: resourceBody(acct.AccountID, ec2ARN(acct.AccountID, 2)), Status: 200,
			Min: ddbrecord.Cost{Requests: 1}, Note: "the transaction is cancelled by the resource's condition: nothing is written"},
		{Operation: "DELETE /schedules/{id}/resources/{arn+}", Method: contract.DetachResource.Method,
			Path: func() string {
				// The ARN escaped whole, slashes too (Route.URL keeps a
				// greedy value's slashes).
				return contract.DetachResource.URL(sc.ScheduleID, "") + url.PathEscape(ec2ARN(acct.AccountID, 2))
			},
			Header: user, Status: 204, Min: ddbrecord.Cost{Requests: 1, Write: 16},
			Note: "one TransactWriteItems: the resource (and its GSI1 copy) deleted if attached, the schedule's `resource_version` and the account's `resource_count` moved (GSI1 copies too), and the audit entry"},
		{Operation: "POST /audit", Method: contract.RecordExecution.Method, Path: path(contract.RecordExecution.URL()), Header: user,
			Body:   `{"entity_type":"schedule","entity_id":"` + sc.ScheduleID + `","action":"EXECUTE","status":"SUCCESS","details":{"operation":"stop"}}`,
			Status: 201, Min: ddbrecord.Cost{Requests: 1, Write: 6}, Note: "one TransactWriteItems: the entry (and its GSI1 copy), with a condition check that the schedule exists"},
		{Operation: "GET /audit/{entityType}/{id}", Method: contract.EntityLog.Method, Path: path(contract.EntityLog.URL("schedule", sc.ScheduleID)), Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 1}, Note: "one strongly consistent Query of the entity's partition, newest first"},
		{Operation: "GET /audit/global", Method: contract.GlobalLog.Method, Path: path(contract.GlobalLog.URL()), Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 1}, Note: "one strongly consistent Query of the global partition (empty here)"},
		{Operation: "POST /accounts/{id}/test", Method: contract.TestAccount.Method, Path: path(contract.TestAccount.URL(acct.AccountID)), Header: user, Status: 200,
			Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 8}, Note: "a strongly consistent GetItem for the role, then one TransactWriteItems: `last_test_run_at` moved forward on the account (its GSI1 copy too) with the EXECUTE entry (and its GSI1 copy)"},
		{Operation: "DELETE /accounts/{id}", Method: contract.DeleteAccount.Method, Path: path(contract.DeleteAccount.URL("100000000000")), Header: user, Status: 204,
			Min: ddbrecord.Cost{Requests: 3, Read: 1.5, Write: 8}, Note: "a strongly consistent GetItem (the entry records the account; `resource_count` answers 409 early), a Limit-1 count Query of GSI1 `ACCOUNT#<id>` for resources attached before the count existed (Decision 22), one TransactWriteItems: the delete conditioned on the count being 0, with the audit entry"},
		{Operation: "DELETE /schedules/{id}", Method: "DELETE", Path: schedule, Header: user, Status: 204,
			Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 16}, Note: "a strongly consistent Query of the schedule's partition (the schedule and its one resource), then one TransactWriteItems: the schedule and the resource deleted (each with its GSI1 copy), the account's `resource_count` moved (GSI1 copy too), the audit entry"},
		{Operation: "GET /audit", Method: contract.Timeline.Method, Path: path(contract.Timeline.URL()), Status: 200,
			Min: ddbrecord.Cost{Requests: 1, Read: 1}, Note: "one eventually consistent Query of GSI1 `AUDIT#GLOBAL`: every entry so far, 4 to 8 KB"},
	})
	if mode == servicetest.Cost {
		ddbrecord.CheckServiceDoc(t, "nucleus", rows)
	}
}
