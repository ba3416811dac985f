package nucleus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuditLog(t *testing.T) {
	c := newClock(time.Millisecond)
	s := newService(t, options{now: c.Now})
	const acct = "123456789012"
	s.createAccount(t, acct, "Dev", "active")
	sc := s.createSchedule(t, "Nightly")
	for i := range 10 {
		s.MustRoute(t, 200, contract.UpdateSchedule, fmt.Sprintf(`{"schedule_name":"n%d"}`, i), nil, sc.ScheduleID)
	}
	s.MustRoute(t, 201, contract.AttachResource, resourceBody(acct, ec2ARN(acct, 1)), nil, sc.ScheduleID)

	// One entity: 12 entries newest first, paged.
	var all []nucleus.AuditEntry
	cur := ""
	for i := 0; ; i++ {
		p := s.audit(t, contract.EntityLog.URL("schedule", sc.ScheduleID)+"?limit=5&cursor="+cur)
		require.Len(t, p.Entries, []int{5, 5, 2}[i], "page %d", i)
		all = append(all, p.Entries...)
		if p.NextCursor == "" {
			break
		}
		cur = p.NextCursor
	}
	for i, e := range all {
		assert.Equal(t, nucleus.EntitySchedule, e.EntityType, "entry %d: entity type", i)
		assert.Equal(t, sc.ScheduleID, e.EntityID, "entry %d: entity id", i)
		assert.Equal(t, testUser, e.UserID, "entry %d: user", i)
		assert.Len(t, e.EntryID, 26, "entry %d: entry id", i)
		if i > 0 {
			assert.Less(t, e.Timestamp, all[i-1].Timestamp, "entry %d not older than %d", i, i-1)
		}
		assert.InDelta(t, time.Now().Add(nucleus.Retention).Unix(), e.ExpireAt, 60, "entry %d: expire_at, want about now + 30 days", i)
	}
	assert.Equal(t, nucleus.ActionCreate, all[11].Action, "oldest action")
	assert.Equal(t, nucleus.ActionCreate, all[0].Action, "newest action")
	assert.Equal(t, nucleus.ActionUpdate, all[1].Action, "second newest action")

	// Global timeline: the account's entry too, newest first.
	tl := s.audit(t, contract.Timeline.URLQuery(svc.Values{svc.Limit: "100"}))
	require.Len(t, tl.Entries, 13, "timeline")
	require.Equal(t, nucleus.EntityAccount, tl.Entries[12].EntityType, "timeline: oldest entry's type")
	require.Equal(t, acct, tl.Entries[12].EntityID, "timeline: oldest entry's id")
	// since is inclusive, until exclusive.
	since, until := all[8].Timestamp, all[3].Timestamp
	p := s.audit(t, contract.Timeline.URL()+"?since="+since+"&until="+until)
	if assert.Len(t, p.Entries, 5, "since/until") {
		assert.Equal(t, all[4].Timestamp, p.Entries[0].Timestamp, "since/until: newest (until is exclusive)")
		assert.Equal(t, since, p.Entries[4].Timestamp, "since/until: oldest (since is inclusive)")
	}
	p = s.audit(t, contract.EntityLog.URL("schedule", sc.ScheduleID)+"?since="+url.QueryEscape(strings.Replace(all[2].Timestamp, "Z", "+00:00", 1)))
	assert.Len(t, p.Entries, 3, "since with offset")
	p = s.audit(t, contract.Timeline.URL()+"?until=2000-01-01T00:00:00Z")
	assert.Empty(t, p.Entries, "until before retention: entries")
	assert.Empty(t, p.NextCursor, "until before retention: cursor")

	first := s.audit(t, contract.EntityLog.URLQuery(svc.Values{svc.Limit: "2"}, "schedule", sc.ScheduleID)).NextCursor
	tlCursor := s.audit(t, contract.Timeline.URLQuery(svc.Values{svc.Limit: "2"})).NextCursor
	tests := []struct {
		name, path  string
		status      int
		code, field string
	}{
		{"cursor of another entity", contract.EntityLog.URL("account", acct) + "?cursor=" + first, 400, "bad_request", ""},
		{"entity cursor on timeline", contract.Timeline.URL() + "?cursor=" + first, 400, "bad_request", ""},
		{"timeline cursor with since", contract.Timeline.URL() + "?since=" + since + "&cursor=" + tlCursor, 400, "bad_request", ""},
		{"garbage cursor", contract.Timeline.URLQuery(svc.Values{svc.Cursor: "xyz"}), 400, "bad_request", ""},
		{"bad since", contract.Timeline.URLQuery(svc.Values{contract.ParamSince: "yesterday"}), 400, "validation_failed", "since"},
		{"date only", contract.Timeline.URLQuery(svc.Values{contract.ParamUntil: "2026-01-01"}), 400, "validation_failed", "until"},
		{"since after until", contract.Timeline.URL() + "?since=" + until + "&until=" + since, 400, "validation_failed", "until"},
		{"unknown parameter", contract.Timeline.URL() + "?entity=schedule", 400, "validation_failed", "entity"},
		{"bad limit", contract.Timeline.URLQuery(svc.Values{svc.Limit: "-1"}), 400, "validation_failed", "limit"},
		{"unknown entity type", contract.EntityLog.URL("ticket", acct), 404, "not_found", ""},
		{"plural entity type", contract.EntityLog.URL("schedules", sc.ScheduleID), 404, "not_found", ""},
		{"malformed account id", contract.EntityLog.URL("account", "12"), 404, "not_found", ""},
		{"malformed schedule id", contract.EntityLog.URL("schedule", acct), 404, "not_found", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, "GET", tt.path, ""), tt.status, tt.code, tt.field, "")
		})
	}
	// The log is history: an id that never existed has an empty one.
	assert.Empty(t, s.audit(t, contract.EntityLog.URL("account", "999999999999")).Entries, "unknown account log")
}

// Entries past expire_at are hidden, although DynamoDB deletes them only
// eventually.
func TestAuditExpiry(t *testing.T) {
	c := newClock(time.Second)
	s := newService(t, options{now: c.Now})
	sc := s.createSchedule(t, "Nightly")
	s.MustRoute(t, 200, contract.UpdateSchedule, `{"enabled":false}`, nil, sc.ScheduleID)
	// An entry whose expire_at lies in the past although its timestamp is
	// recent (written by another tool): the filter hides it.
	ts := nucleus.Timestamp(c.Now())
	item, _ := attributevalue.MarshalMap(map[string]any{
		"pk": "SCHEDULE#" + sc.ScheduleID, "sk": "TIMESTAMP#" + ts + "#01J0000000000000000000000X",
		"gsi1pk": "AUDIT#GLOBAL", "gsi1sk": "TIMESTAMP#" + ts + "#01J0000000000000000000000X",
		"action": "EXECUTE", "user_id": "scheduler", "details": "{}", "status": "SUCCESS", "expire_at": time.Now().Add(-time.Hour).Unix(),
	})
	_, err := s.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.tables.Audit), Item: item})
	require.NoError(t, err)
	require.Len(t, s.audit(t, contract.EntityLog.URL("schedule", sc.ScheduleID)).Entries, 2, "before expiry: want 2 (the expired one hidden)")
	cursor := s.audit(t, contract.Timeline.URLQuery(svc.Values{svc.Limit: "1"})).NextCursor

	c.Advance(nucleus.Retention - 5*time.Second)
	// The CREATE (written first) has expired, the UPDATE not yet.
	if p := s.audit(t, contract.EntityLog.URL("schedule", sc.ScheduleID)); assert.Len(t, p.Entries, 1, "at the edge") {
		assert.Equal(t, nucleus.ActionUpdate, p.Entries[0].Action, "at the edge")
	}
	c.Advance(time.Hour)
	for _, path := range []string{contract.EntityLog.URL("schedule", sc.ScheduleID), contract.Timeline.URL(), contract.Timeline.URL() + "?cursor=" + cursor, contract.Timeline.URL() + "?since=2000-01-01T00:00:00Z"} {
		p := s.audit(t, path)
		assert.Empty(t, p.Entries, "GET %s after expiry: entries", path)
		assert.Empty(t, p.NextCursor, "GET %s after expiry: cursor", path)
	}
	// Still stored: DynamoDB has not deleted them yet, the reader hides them.
	_, n := s.counts(t)
	assert.GreaterOrEqual(t, n, 2, "audit table items")
}

// Entries of the same instant for the same entity do not overwrite each
// other: the sort key carries a ULID after the timestamp.
func TestSameInstantAudit(t *testing.T) {
	c := newClock(0) // every call returns the same instant
	s := newService(t, options{now: c.Now})
	sc := s.createSchedule(t, "Nightly")
	for i := range 5 {
		s.MustRoute(t, 200, contract.UpdateSchedule, fmt.Sprintf(`{"schedule_name":"n%d"}`, i), nil, sc.ScheduleID)
	}
	p := s.audit(t, contract.EntityLog.URL("schedule", sc.ScheduleID))
	ids := map[string]bool{}
	for _, e := range p.Entries {
		ids[e.EntryID] = true
		assert.Equal(t, p.Entries[0].Timestamp, e.Timestamp, "clock moved")
	}
	assert.Len(t, p.Entries, 6, "entries")
	assert.Len(t, ids, 6, "distinct entry ids")
}

// The change and its audit entry commit together: when the audit entry
// cannot be written (here: a key collision forced by a constant id), the
// change is not made either.
func TestAuditAtomicWithChange(t *testing.T) {
	c := newClock(0)
	s := newService(t, options{now: c.Now, newEntryID: func(time.Time) string { return "01J00000000000000000000000" }})
	sc := s.createSchedule(t, "Nightly")
	r := s.Do(t, contract.UpdateSchedule.Method, contract.UpdateSchedule.URL(sc.ScheduleID), `{"schedule_name":"Renamed"}`)
	apitest.WantError(t, r, 500, "internal", "", "")
	var d nucleus.ScheduleDetail
	s.MustRoute(t, 200, contract.GetSchedule, "", &d, sc.ScheduleID)
	assert.Equal(t, "Nightly", d.Schedule.ScheduleName, "change applied without its audit entry")
	s.createAccount(t, "123456789012", "Dev", "active")
	apitest.WantError(t, s.Do(t, contract.AttachResource.Method, contract.AttachResource.URL(sc.ScheduleID), resourceBody("123456789012", ec2ARN("123456789012", 1))), 500, "internal", "", "")
	// Two creates worked (their entries went to different partitions);
	// nothing else was written.
	s.wantCounts(t, 2, 2)
}

func TestRecordExecution(t *testing.T) {
	c := newClock(time.Second)
	s := newService(t, options{now: c.Now})
	const acct = "123456789012"
	s.createAccount(t, acct, "Dev", "active")
	sc := s.createSchedule(t, "Nightly")
	exec := func(fields map[string]any) string {
		m := map[string]any{"entity_type": "schedule", "entity_id": sc.ScheduleID, "action": "EXECUTE", "status": "SUCCESS",
			"details": map[string]any{"operation": "stop", "resources": 3}}
		for k, v := range fields {
			if v == nil {
				delete(m, k)
				continue
			}
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	type f = map[string]any
	tests := []struct {
		name, body  string
		status      int
		code, field string
	}{
		{"schedule success", exec(nil), 201, "", ""},
		{"schedule fail, no details", exec(f{"status": "FAIL", "details": nil}), 201, "", ""},
		{"account test", exec(f{"entity_type": "account", "entity_id": acct}), 201, "", ""},
		{"global", exec(f{"entity_type": "global", "entity_id": nil}), 201, "", ""},
		{"big number kept exactly", exec(f{"details": json.RawMessage(`{"n": 12345678901234567890123}`)}), 201, "", ""},
		{"unknown schedule", exec(f{"entity_id": "3f1d7e3a-1111-4000-8000-000000000000"}), 409, "conflict", ""},
		{"unknown account", exec(f{"entity_type": "account", "entity_id": "999999999999"}), 409, "conflict", ""},
		{"client CREATE", exec(f{"action": "CREATE"}), 400, "validation_failed", "action"},
		{"missing action", exec(f{"action": nil}), 400, "validation_failed", "action"},
		{"bad status", exec(f{"status": "OK"}), 400, "validation_failed", "status"},
		{"bad entity type", exec(f{"entity_type": "ticket"}), 400, "validation_failed", "entity_type"},
		{"malformed schedule id", exec(f{"entity_id": "x"}), 400, "validation_failed", "entity_id"},
		{"missing entity id", exec(f{"entity_id": nil}), 400, "validation_failed", "entity_id"},
		{"global with id", exec(f{"entity_type": "global"}), 400, "validation_failed", "entity_id"},
		{"details array", exec(f{"details": []int{1}}), 400, "validation_failed", "details"},
		{"details null", exec(f{"details": json.RawMessage(`null`)}), 400, "validation_failed", "details"},
		{"details string", exec(f{"details": "stopped"}), 400, "validation_failed", "details"},
		{"details too large", exec(f{"details": map[string]string{"log": strings.Repeat("x", nucleus.MaxDetailsBytes)}}), 400, "validation_failed", "details"},
		{"unknown field", exec(f{"timestamp": "x"}), 400, "validation_failed", "timestamp"},
	}
	app, audit := s.counts(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, contract.RecordExecution.Method, contract.RecordExecution.URL(), tt.body)
			if tt.status != 201 {
				apitest.WantError(t, r, tt.status, tt.code, tt.field, "")
				s.wantCounts(t, app, audit)
				return
			}
			audit++
			require.Equal(t, 201, r.Status, "status: %s", r.Body)
			var e nucleus.AuditEntry
			r.JSON(t, &e)
			assert.Equal(t, nucleus.ActionExecute, e.Action, "action")
			assert.Equal(t, testUser, e.UserID, "user")
			assert.Regexp(t, tsPattern, e.Timestamp, "timestamp")
			assert.Regexp(t, `^\{`, string(e.Details), "details are an object")
			if strings.Contains(tt.name, "big number") {
				assert.Contains(t, string(e.Details), "12345678901234567890123", "details changed")
			}
			s.wantCounts(t, app, audit)
		})
	}
	var a nucleus.Account
	s.MustRoute(t, 200, contract.GetAccount, "", &a, acct)
	p := s.audit(t, contract.EntityLog.URL("account", acct))
	require.NotEmpty(t, p.Entries, "account's audit")
	assert.NotEmpty(t, a.LastTestRunAt, "last_test_run_at")
	assert.Equal(t, p.Entries[0].Timestamp, a.LastTestRunAt, "last_test_run_at is the latest execution's")
	assert.NotEqual(t, a.UpdatedAt, a.LastTestRunAt, "updated_at")
	if g := s.audit(t, contract.GlobalLog.URL()); assert.Len(t, g.Entries, 1, "global entity log") {
		assert.Equal(t, nucleus.EntityGlobal, g.Entries[0].EntityType, "global entity log: type")
		assert.Empty(t, g.Entries[0].EntityID, "global entity log: id")
	}
	apitest.WantError(t, s.doAs(t, "", contract.RecordExecution.Method, contract.RecordExecution.URL(), exec(nil)), 400, "validation_failed", nucleus.HeaderUserID, "")
}

// Behind API Gateway with IAM authorization, the caller's ARN is the user
// and a header cannot override it.
func TestIAMCaller(t *testing.T) {
	s := newService(t, options{})
	adapter := httpadapter.NewV2(s.H)
	const caller = "arn:aws:sts::123456789012:assumed-role/Ops/alice"
	ev := events.APIGatewayV2HTTPRequest{
		RawPath: contract.ListSchedules.URL(),
		Headers: map[string]string{"content-type": "application/json", "x-user-id": "mallory"},
		Body:    scheduleBody(nil),
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID:  "req-1",
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: contract.CreateSchedule.Method, Path: contract.CreateSchedule.URL()},
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: caller}},
		},
	}
	resp, err := adapter.ProxyWithContext(context.Background(), ev)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", resp.Body)
	var sc nucleus.Schedule
	_ = json.Unmarshal([]byte(resp.Body), &sc)
	if p := s.audit(t, contract.EntityLog.URL("schedule", sc.ScheduleID)); assert.Len(t, p.Entries, 1, "audit") {
		assert.Equal(t, caller, p.Entries[0].UserID, "audit: user")
	}

	// Without an IAM authorizer the header is the user, and required.
	ev.RequestContext.Authorizer = nil
	ev.Headers = map[string]string{"content-type": "application/json"}
	resp, _ = adapter.ProxyWithContext(context.Background(), ev)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "no identity: %s", resp.Body)
	assert.Contains(t, resp.Body, nucleus.HeaderUserID, "no identity")
	// An escaped ARN in RawPath reaches the handler intact.
	ev.Headers = map[string]string{"x-user-id": "ops"}
	ev.RequestContext.HTTP.Method = "DELETE"
	// The ARN escaped whole, slashes too (Route.URL keeps a greedy
	// value's slashes): the route's path with an empty ARN, then it.
	ev.RawPath = contract.DetachResource.URL(sc.ScheduleID, "") + url.PathEscape(ec2ARN("123456789012", 5))
	ev.Body = ""
	resp, _ = adapter.ProxyWithContext(context.Background(), ev)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "escaped ARN: %s", resp.Body)
	assert.Contains(t, resp.Body, ec2ARN("123456789012", 5), "escaped ARN")
}

// Every route pattern of the handler (test/e2e compares them with the
// deployed routes) answers: no "no route" 404, no 405, no 5xx.
func TestRoutes(t *testing.T) {
	s := newService(t, options{})
	for _, route := range s.H.(api.Routed).Patterns() {
		method, path, _ := strings.Cut(route, " ")
		path = strings.NewReplacer("{id}", "3f1d7e3a-1111-4000-8000-000000000000", "{entityType}", "schedule",
			"{arn...}", url.PathEscape(ec2ARN("123456789012", 1))).Replace(path)
		r := s.Do(t, method, path, "{}")
		var e apitest.ErrorBody
		_ = json.Unmarshal(r.Body, &e)
		assert.NotEqual(t, 405, r.Status, "%s: %s", route, r.Body)
		assert.NotContains(t, e.Error.Message, "no route", "%s: %s", route, r.Body)
		assert.Less(t, r.Status, 500, "%s: %s", route, r.Body)
	}
}
