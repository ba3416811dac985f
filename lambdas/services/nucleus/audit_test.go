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

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
)

func TestAuditLog(t *testing.T) {
	c := newClock(time.Millisecond)
	s := newService(t, options{now: c.Now})
	const acct = "123456789012"
	s.createAccount(t, acct, "Dev", "active")
	sc := s.createSchedule(t, "Nightly")
	for i := range 10 {
		s.Must(t, 200, "PATCH", "/schedules/"+sc.ScheduleID, fmt.Sprintf(`{"schedule_name":"n%d"}`, i), nil)
	}
	s.Must(t, 201, "PUT", "/schedules/"+sc.ScheduleID+"/resources", resourceBody(acct, ec2ARN(acct, 1)), nil)

	// One entity: 12 entries newest first, paged.
	var all []nucleus.AuditEntry
	cur := ""
	for i := 0; ; i++ {
		p := s.audit(t, "/audit/schedule/"+sc.ScheduleID+"?limit=5&cursor="+cur)
		if len(p.Entries) != []int{5, 5, 2}[i] {
			t.Fatalf("page %d: %d entries", i, len(p.Entries))
		}
		all = append(all, p.Entries...)
		if p.NextCursor == "" {
			break
		}
		cur = p.NextCursor
	}
	for i, e := range all {
		if e.EntityType != nucleus.EntitySchedule || e.EntityID != sc.ScheduleID || e.UserID != testUser || len(e.EntryID) != 26 {
			t.Errorf("entry %d = %+v", i, e)
		}
		if i > 0 && e.Timestamp >= all[i-1].Timestamp {
			t.Errorf("entry %d (%s) not older than %d (%s)", i, e.Timestamp, i-1, all[i-1].Timestamp)
		}
		if want := time.Now().Add(nucleus.Retention).Unix(); e.ExpireAt < want-60 || e.ExpireAt > want+60 {
			t.Errorf("expire_at %d, want about now + 30 days (%d)", e.ExpireAt, want)
		}
	}
	if all[11].Action != nucleus.ActionCreate || all[0].Action != nucleus.ActionCreate || all[1].Action != nucleus.ActionUpdate {
		t.Errorf("actions %s … %s", all[0].Action, all[11].Action)
	}

	// Global timeline: the account's entry too, newest first.
	tl := s.audit(t, "/audit?limit=100")
	if len(tl.Entries) != 13 || tl.Entries[12].EntityType != nucleus.EntityAccount || tl.Entries[12].EntityID != acct {
		t.Fatalf("timeline: %d entries, oldest %+v", len(tl.Entries), tl.Entries[len(tl.Entries)-1])
	}
	// since is inclusive, until exclusive.
	since, until := all[8].Timestamp, all[3].Timestamp
	p := s.audit(t, "/audit?since="+since+"&until="+until)
	if len(p.Entries) != 5 || p.Entries[0].Timestamp != all[4].Timestamp || p.Entries[4].Timestamp != since {
		t.Errorf("since/until: %d entries %+v", len(p.Entries), p.Entries)
	}
	p = s.audit(t, "/audit/schedule/"+sc.ScheduleID+"?since="+url.QueryEscape(strings.Replace(all[2].Timestamp, "Z", "+00:00", 1)))
	if len(p.Entries) != 3 {
		t.Errorf("since with offset: %d entries", len(p.Entries))
	}
	p = s.audit(t, "/audit?until=2000-01-01T00:00:00Z")
	if len(p.Entries) != 0 || p.NextCursor != "" {
		t.Errorf("until before retention: %+v", p)
	}

	first := s.audit(t, "/audit/schedule/"+sc.ScheduleID+"?limit=2").NextCursor
	tlCursor := s.audit(t, "/audit?limit=2").NextCursor
	tests := []struct {
		name, path  string
		status      int
		code, field string
	}{
		{"cursor of another entity", "/audit/account/" + acct + "?cursor=" + first, 400, "bad_request", ""},
		{"entity cursor on timeline", "/audit?cursor=" + first, 400, "bad_request", ""},
		{"timeline cursor with since", "/audit?since=" + since + "&cursor=" + tlCursor, 400, "bad_request", ""},
		{"garbage cursor", "/audit?cursor=xyz", 400, "bad_request", ""},
		{"bad since", "/audit?since=yesterday", 400, "validation_failed", "since"},
		{"date only", "/audit?until=2026-01-01", 400, "validation_failed", "until"},
		{"since after until", "/audit?since=" + until + "&until=" + since, 400, "validation_failed", "until"},
		{"unknown parameter", "/audit?entity=schedule", 400, "validation_failed", "entity"},
		{"bad limit", "/audit?limit=-1", 400, "validation_failed", "limit"},
		{"unknown entity type", "/audit/ticket/" + acct, 404, "not_found", ""},
		{"plural entity type", "/audit/schedules/" + sc.ScheduleID, 404, "not_found", ""},
		{"malformed account id", "/audit/account/12", 404, "not_found", ""},
		{"malformed schedule id", "/audit/schedule/" + acct, 404, "not_found", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, "GET", tt.path, ""), tt.status, tt.code, tt.field, "")
		})
	}
	// The log is history: an id that never existed has an empty one.
	if p := s.audit(t, "/audit/account/999999999999"); len(p.Entries) != 0 {
		t.Errorf("unknown account log %+v", p)
	}
}

// Entries past expire_at are hidden, although DynamoDB deletes them only
// eventually.
func TestAuditExpiry(t *testing.T) {
	c := newClock(time.Second)
	s := newService(t, options{now: c.Now})
	sc := s.createSchedule(t, "Nightly")
	s.Must(t, 200, "PATCH", "/schedules/"+sc.ScheduleID, `{"enabled":false}`, nil)
	// An entry whose expire_at lies in the past although its timestamp is
	// recent (written by another tool): the filter hides it.
	ts := nucleus.Timestamp(c.Now())
	item, _ := attributevalue.MarshalMap(map[string]any{
		"pk": "SCHEDULE#" + sc.ScheduleID, "sk": "TIMESTAMP#" + ts + "#01J0000000000000000000000X",
		"gsi1pk": "AUDIT#GLOBAL", "gsi1sk": "TIMESTAMP#" + ts + "#01J0000000000000000000000X",
		"action": "EXECUTE", "user_id": "scheduler", "details": "{}", "status": "SUCCESS", "expire_at": time.Now().Add(-time.Hour).Unix(),
	})
	if _, err := s.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.tables.Audit), Item: item}); err != nil {
		t.Fatal(err)
	}
	if p := s.audit(t, "/audit/schedule/"+sc.ScheduleID); len(p.Entries) != 2 {
		t.Fatalf("before expiry: %d entries, want 2 (the expired one hidden)", len(p.Entries))
	}
	cursor := s.audit(t, "/audit?limit=1").NextCursor

	c.Advance(nucleus.Retention - 5*time.Second)
	// The CREATE (written first) has expired, the UPDATE not yet.
	if p := s.audit(t, "/audit/schedule/"+sc.ScheduleID); len(p.Entries) != 1 || p.Entries[0].Action != nucleus.ActionUpdate {
		t.Errorf("at the edge: %+v", p.Entries)
	}
	c.Advance(time.Hour)
	for _, path := range []string{"/audit/schedule/" + sc.ScheduleID, "/audit", "/audit?cursor=" + cursor, "/audit?since=2000-01-01T00:00:00Z"} {
		if p := s.audit(t, path); len(p.Entries) != 0 || p.NextCursor != "" {
			t.Errorf("GET %s after expiry: %+v", path, p)
		}
	}
	// Still stored: DynamoDB has not deleted them yet, the reader hides them.
	if _, n := s.counts(t); n < 2 {
		t.Errorf("audit table holds %d items", n)
	}
}

// Entries of the same instant for the same entity do not overwrite each
// other: the sort key carries a ULID after the timestamp.
func TestSameInstantAudit(t *testing.T) {
	c := newClock(0) // every call returns the same instant
	s := newService(t, options{now: c.Now})
	sc := s.createSchedule(t, "Nightly")
	for i := range 5 {
		s.Must(t, 200, "PATCH", "/schedules/"+sc.ScheduleID, fmt.Sprintf(`{"schedule_name":"n%d"}`, i), nil)
	}
	p := s.audit(t, "/audit/schedule/"+sc.ScheduleID)
	ids := map[string]bool{}
	for _, e := range p.Entries {
		ids[e.EntryID] = true
		if e.Timestamp != p.Entries[0].Timestamp {
			t.Errorf("clock moved: %s vs %s", e.Timestamp, p.Entries[0].Timestamp)
		}
	}
	if len(p.Entries) != 6 || len(ids) != 6 {
		t.Errorf("%d entries with %d distinct ids, want 6", len(p.Entries), len(ids))
	}
}

// The change and its audit entry commit together: when the audit entry
// cannot be written (here: a key collision forced by a constant id), the
// change is not made either.
func TestAuditAtomicWithChange(t *testing.T) {
	c := newClock(0)
	s := newService(t, options{now: c.Now, newEntryID: func(time.Time) string { return "01J00000000000000000000000" }})
	sc := s.createSchedule(t, "Nightly")
	r := s.Do(t, "PATCH", "/schedules/"+sc.ScheduleID, `{"schedule_name":"Renamed"}`)
	apitest.WantError(t, r, 500, "internal", "", "")
	var d nucleus.ScheduleDetail
	s.Must(t, 200, "GET", "/schedules/"+sc.ScheduleID, "", &d)
	if d.Schedule.ScheduleName != "Nightly" {
		t.Errorf("change applied without its audit entry: %+v", d.Schedule)
	}
	s.createAccount(t, "123456789012", "Dev", "active")
	apitest.WantError(t, s.Do(t, "PUT", "/schedules/"+sc.ScheduleID+"/resources", resourceBody("123456789012", ec2ARN("123456789012", 1))), 500, "internal", "", "")
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
			r := s.Do(t, "POST", "/audit", tt.body)
			if tt.status != 201 {
				apitest.WantError(t, r, tt.status, tt.code, tt.field, "")
				s.wantCounts(t, app, audit)
				return
			}
			audit++
			if r.Status != 201 {
				t.Fatalf("status %d %s", r.Status, r.Body)
			}
			var e nucleus.AuditEntry
			r.JSON(t, &e)
			if e.Action != nucleus.ActionExecute || e.UserID != testUser || !tsPattern.MatchString(e.Timestamp) || e.Details[0] != '{' {
				t.Errorf("entry = %+v", e)
			}
			if strings.Contains(tt.name, "big number") && !strings.Contains(string(e.Details), "12345678901234567890123") {
				t.Errorf("details changed: %s", e.Details)
			}
			s.wantCounts(t, app, audit)
		})
	}
	var a nucleus.Account
	s.Must(t, 200, "GET", "/accounts/"+acct, "", &a)
	p := s.audit(t, "/audit/account/"+acct)
	if a.LastTestRunAt == "" || a.LastTestRunAt != p.Entries[0].Timestamp || a.UpdatedAt == a.LastTestRunAt {
		t.Errorf("last_test_run_at %q, entry %+v", a.LastTestRunAt, p.Entries[0])
	}
	if g := s.audit(t, "/audit/global"); len(g.Entries) != 1 || g.Entries[0].EntityType != nucleus.EntityGlobal || g.Entries[0].EntityID != "" {
		t.Errorf("global entity log = %+v", g.Entries)
	}
	apitest.WantError(t, s.doAs(t, "", "POST", "/audit", exec(nil)), 400, "validation_failed", nucleus.HeaderUserID, "")
}

// Behind API Gateway with IAM authorization, the caller's ARN is the user
// and a header cannot override it.
func TestIAMCaller(t *testing.T) {
	s := newService(t, options{})
	adapter := httpadapter.NewV2(s.H)
	const caller = "arn:aws:sts::123456789012:assumed-role/Ops/alice"
	ev := events.APIGatewayV2HTTPRequest{
		RawPath: "/schedules",
		Headers: map[string]string{"content-type": "application/json", "x-user-id": "mallory"},
		Body:    scheduleBody(nil),
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID:  "req-1",
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/schedules"},
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: caller}},
		},
	}
	resp, err := adapter.ProxyWithContext(context.Background(), ev)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("%v %d %s", err, resp.StatusCode, resp.Body)
	}
	var sc nucleus.Schedule
	_ = json.Unmarshal([]byte(resp.Body), &sc)
	if p := s.audit(t, "/audit/schedule/"+sc.ScheduleID); len(p.Entries) != 1 || p.Entries[0].UserID != caller {
		t.Errorf("audit = %+v", p.Entries)
	}

	// Without an IAM authorizer the header is the user, and required.
	ev.RequestContext.Authorizer = nil
	ev.Headers = map[string]string{"content-type": "application/json"}
	resp, _ = adapter.ProxyWithContext(context.Background(), ev)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(resp.Body, nucleus.HeaderUserID) {
		t.Errorf("no identity: %d %s", resp.StatusCode, resp.Body)
	}
	// An escaped ARN in RawPath reaches the handler intact.
	ev.Headers = map[string]string{"x-user-id": "ops"}
	ev.RequestContext.HTTP.Method = "DELETE"
	ev.RawPath = "/schedules/" + sc.ScheduleID + "/resources/" + url.PathEscape(ec2ARN("123456789012", 5))
	ev.Body = ""
	resp, _ = adapter.ProxyWithContext(context.Background(), ev)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(resp.Body, ec2ARN("123456789012", 5)) {
		t.Errorf("escaped ARN: %d %s", resp.StatusCode, resp.Body)
	}
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
		if r.Status == 405 || strings.Contains(e.Error.Message, "no route") || r.Status >= 500 {
			t.Errorf("%s: %d %s", route, r.Status, r.Body)
		}
	}
}
