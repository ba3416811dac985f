package nucleus_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func scheduleBody(fields map[string]any) string {
	m := map[string]any{"schedule_name": "Dev shutdown", "start_cron": "0 8 * * MON-FRI", "end_cron": "0 18 * * MON-FRI",
		"timezone": "Europe/Berlin", "enabled": true}
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

func TestCreateSchedule(t *testing.T) {
	s := newService(t, options{})
	type f = map[string]any
	tests := []struct {
		name   string
		body   string
		status int
		code   string
		field  string
	}{
		{"valid", scheduleBody(nil), 201, "", ""},
		{"disabled", scheduleBody(f{"enabled": false}), 201, "", ""},
		{"UTC", scheduleBody(f{"timezone": "UTC"}), 201, "", ""},
		{"cron lists ranges steps", scheduleBody(f{"start_cron": "*/15 6-8,20 1,15 */2 1-5", "end_cron": "0 0 L * ?"}), 201, "", ""},
		{"cron names lower case", scheduleBody(f{"start_cron": "30 7 * jan-mar mon", "end_cron": "30 19 * JAN-MAR MON"}), 201, "", ""},
		{"cron sunday as 0 and 7", scheduleBody(f{"start_cron": "0 9 * * 0", "end_cron": "0 17 * * 7"}), 201, "", ""},
		{"eventbridge 6 fields", scheduleBody(f{"start_cron": "0 8 ? * MON-FRI *", "end_cron": "0 18 ? * 2#1 2026-2030"}), 201, "", ""},
		{"eventbridge W and L", scheduleBody(f{"start_cron": "0 8 15W * ? *", "end_cron": "0 18 ? * 6L *"}), 201, "", ""},
		{"missing name", scheduleBody(f{"schedule_name": nil}), 400, "validation_failed", "schedule_name"},
		{"padded name", scheduleBody(f{"schedule_name": "x "}), 400, "validation_failed", "schedule_name"},
		{"name too long", scheduleBody(f{"schedule_name": strings.Repeat("n", nucleus.MaxNameChars+1)}), 400, "validation_failed", "schedule_name"},
		{"missing start", scheduleBody(f{"start_cron": nil}), 400, "validation_failed", "start_cron"},
		{"cron 4 fields", scheduleBody(f{"start_cron": "0 8 * *"}), 400, "validation_failed", "start_cron"},
		{"cron 7 fields", scheduleBody(f{"start_cron": "0 0 8 * * ? *"}), 400, "validation_failed", "start_cron"},
		{"cron minute 60", scheduleBody(f{"start_cron": "60 8 * * *"}), 400, "validation_failed", "start_cron"},
		{"cron hour 24", scheduleBody(f{"end_cron": "0 24 * * *"}), 400, "validation_failed", "end_cron"},
		{"cron day 0", scheduleBody(f{"end_cron": "0 8 0 * *"}), 400, "validation_failed", "end_cron"},
		{"cron month 13", scheduleBody(f{"end_cron": "0 8 * 13 *"}), 400, "validation_failed", "end_cron"},
		{"cron bad name", scheduleBody(f{"end_cron": "0 8 * * FUN"}), 400, "validation_failed", "end_cron"},
		{"cron backwards range", scheduleBody(f{"end_cron": "0 8 * * 5-1"}), 400, "validation_failed", "end_cron"},
		{"cron zero step", scheduleBody(f{"end_cron": "*/0 8 * * *"}), 400, "validation_failed", "end_cron"},
		{"cron empty list element", scheduleBody(f{"end_cron": "0 8,,9 * * *"}), 400, "validation_failed", "end_cron"},
		{"cron ? in minute", scheduleBody(f{"end_cron": "? 8 * * *"}), 400, "validation_failed", "end_cron"},
		{"cron macro", scheduleBody(f{"end_cron": "@daily"}), 400, "validation_failed", "end_cron"},
		{"cron wrapped", scheduleBody(f{"end_cron": "cron(0 8 * * ? *)"}), 400, "validation_failed", "end_cron"},
		{"eventbridge both day fields", scheduleBody(f{"end_cron": "0 8 * * MON *"}), 400, "validation_failed", "end_cron"},
		{"eventbridge year out of range", scheduleBody(f{"end_cron": "0 8 ? * MON 1900"}), 400, "validation_failed", "end_cron"},
		{"same start and end", scheduleBody(f{"end_cron": "0 8 * * MON-FRI"}), 400, "validation_failed", "end_cron"},
		{"unknown timezone", scheduleBody(f{"timezone": "Mars/Olympus"}), 400, "validation_failed", "timezone"},
		{"Local timezone", scheduleBody(f{"timezone": "Local"}), 400, "validation_failed", "timezone"},
		{"missing timezone", scheduleBody(f{"timezone": nil}), 400, "validation_failed", "timezone"},
		{"missing enabled", scheduleBody(f{"enabled": nil}), 400, "validation_failed", "enabled"},
		{"string enabled", scheduleBody(f{"enabled": "yes"}), 400, "validation_failed", "enabled"},
		{"unknown field", scheduleBody(f{"owner": "x"}), 400, "validation_failed", "owner"},
		{"client-chosen id", scheduleBody(f{"schedule_id": "x"}), 400, "validation_failed", "schedule_id"},
		{"null body", `null`, 400, "bad_request", ""},
		{"empty body", ``, 400, "bad_request", ""},
		{"too large", scheduleBody(f{"schedule_name": strings.Repeat("x", 70<<10)}), 413, "too_large", ""},
	}
	created := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, contract.CreateSchedule.Method, contract.CreateSchedule.URL(), tt.body)
			if tt.status != 201 {
				apitest.WantError(t, r, tt.status, tt.code, tt.field, "")
				return
			}
			created++
			require.Equal(t, 201, r.Status, "status: %s", r.Body)
			var sc nucleus.Schedule
			r.JSON(t, &sc)
			assert.Len(t, sc.ScheduleID, 36, "schedule id")
			assert.Equal(t, strings.TrimPrefix(contract.GetSchedule.URL(sc.ScheduleID), "/"), r.Header.Get("Location"), "Location")
			assert.Regexp(t, tsPattern, sc.CreatedAt, "created_at")
		})
	}
	s.wantCounts(t, created, created)
	t.Run("missing user", func(t *testing.T) {
		apitest.WantError(t, s.doAs(t, "", contract.CreateSchedule.Method, contract.CreateSchedule.URL(), scheduleBody(nil)), 400, "validation_failed", nucleus.HeaderUserID, "")
		s.wantCounts(t, created, created)
	})
}

func TestGetSchedule(t *testing.T) {
	s := newService(t, options{})
	const acct = "123456789012"
	s.createAccount(t, acct, "Dev", "active")
	sc := s.createSchedule(t, "Nightly")
	other := s.createSchedule(t, "Other")
	var arns []string
	for i := range 7 {
		arns = append(arns, ec2ARN(acct, i))
		s.MustRoute(t, 201, contract.AttachResource, resourceBody(acct, arns[i]), nil, sc.ScheduleID)
	}
	s.MustRoute(t, 201, contract.AttachResource, resourceBody(acct, ec2ARN(acct, 99)), nil, other.ScheduleID)

	// One call: the schedule and all its resources.
	var d nucleus.ScheduleDetail
	s.MustRoute(t, 200, contract.GetSchedule, "", &d, sc.ScheduleID)
	require.NotNil(t, d.Schedule, "detail: schedule")
	require.Equal(t, sc, *d.Schedule, "detail: schedule")
	require.Len(t, d.Resources, 7, "detail: resources")
	require.Empty(t, d.Next, "detail: next")
	for i, r := range d.Resources {
		assert.Equal(t, arns[i], r.ResourceARN, "resource %d: arn", i)
		assert.Equal(t, sc.ScheduleID, r.ScheduleID, "resource %d: schedule", i)
		assert.Equal(t, acct, r.AccountID, "resource %d: account", i)
		assert.Equal(t, "us-east-1", r.Region, "resource %d: region", i)
		assert.Equal(t, nucleus.ResourceEC2, r.ResourceType, "resource %d: type", i)
	}

	// Paged: every page carries the schedule; pages are full.
	var got []string
	cur := ""
	for i := 0; ; i++ {
		var p nucleus.ScheduleDetail
		s.Must(t, 200, contract.GetSchedule.Method, contract.GetSchedule.URL(sc.ScheduleID)+"?limit=3&cursor="+cur, "", &p)
		require.NotNil(t, p.Schedule, "page %d: schedule", i)
		require.Equal(t, sc.ScheduleID, p.Schedule.ScheduleID, "page %d: schedule", i)
		require.Len(t, p.Resources, []int{3, 3, 1}[i], "page %d: resources", i)
		for _, r := range p.Resources {
			got = append(got, r.ResourceARN)
		}
		if p.Next == "" {
			break
		}
		cur = p.Next
	}
	assert.Equal(t, arns, got, "paged resources")
	var p nucleus.ScheduleDetail
	s.Must(t, 200, contract.GetSchedule.Method, contract.GetSchedule.URLQuery(svc.Values{svc.Limit: "7"}, sc.ScheduleID), "", &p)
	assert.Len(t, p.Resources, 7, "exact page: resources")
	assert.Empty(t, p.Next, "exact page: next")
	s.Must(t, 200, contract.GetSchedule.Method, contract.GetSchedule.URLQuery(svc.Values{svc.Limit: "2"}, sc.ScheduleID), "", &p)

	var empty nucleus.ScheduleDetail
	s.MustRoute(t, 200, contract.GetSchedule, "", &empty, s.createSchedule(t, "Empty").ScheduleID)
	assert.NotNil(t, empty.Resources, "empty schedule: resources are a list, not null")
	assert.Empty(t, empty.Resources, "empty schedule: resources")

	apitest.WantError(t, s.Do(t, contract.GetSchedule.Method, contract.GetSchedule.URL("3f1d7e3a-1111-4000-8000-000000000000"), ""), 404, "not_found", "", "")
	apitest.WantError(t, s.Do(t, contract.GetSchedule.Method, contract.GetSchedule.URL("not-a-uuid"), ""), 404, "not_found", "", "")
	apitest.WantError(t, s.Do(t, contract.GetSchedule.Method, contract.GetSchedule.URL(strings.ToUpper(sc.ScheduleID)), ""), 404, "not_found", "", "")
	apitest.WantError(t, s.Do(t, contract.GetSchedule.Method, contract.GetSchedule.URL(other.ScheduleID)+"?cursor="+p.Next, ""), 400, "bad_request", "", "cursor")
	apitest.WantError(t, s.Do(t, contract.GetSchedule.Method, contract.GetSchedule.URL(sc.ScheduleID)+"?page=2", ""), 400, "validation_failed", "page", "")
}

func TestUpdateSchedule(t *testing.T) {
	s := newService(t, options{})
	a := s.createSchedule(t, "Alpha")
	s.createSchedule(t, "Beta")
	s.createSchedule(t, "Gamma")

	var got nucleus.Schedule
	s.MustRoute(t, 200, contract.UpdateSchedule, `{"schedule_name":"Zulu","enabled":false,"timezone":"UTC"}`, &got, a.ScheduleID)
	assert.Equal(t, "Zulu", got.ScheduleName, "updated name")
	assert.False(t, got.Enabled, "updated enabled")
	assert.Equal(t, "UTC", got.Timezone, "updated timezone")
	assert.Equal(t, a.StartCron, got.StartCron, "start_cron after update")
	assert.Greater(t, got.UpdatedAt, a.UpdatedAt, "updated_at moves forward")
	// The rename is in the alphabetical list at once (gsi1sk changed with
	// the name; DynamoDB Local updates indexes synchronously).
	var list nucleus.SchedulePage
	s.MustRoute(t, 200, contract.ListSchedules, "", &list)
	var names []string
	for _, sc := range list.Schedules {
		names = append(names, sc.ScheduleName)
	}
	require.Equal(t, []string{"Beta", "Gamma", "Zulu"}, names, "list after rename")
	assert.Equal(t, got, list.Schedules[2], "list entry")
	p := s.audit(t, contract.EntityLog.URL("schedule", a.ScheduleID))
	if assert.Len(t, p.Entries, 2, "audit") {
		assert.Equal(t, nucleus.ActionUpdate, p.Entries[0].Action, "audit: action")
		assert.Equal(t, `{"changes":{"enabled":{"old":true,"new":false},"schedule_name":{"old":"Alpha","new":"Zulu"},"timezone":{"old":"Europe/Berlin","new":"UTC"}}}`,
			string(p.Entries[0].Details), "audit: details")
	}

	tests := []struct {
		name, id, body string
		status         int
		code, field    string
	}{
		{"unknown schedule", "3f1d7e3a-1111-4000-8000-000000000000", `{"enabled":true}`, 404, "not_found", ""},
		{"malformed id", "nope", `{"enabled":true}`, 404, "not_found", ""},
		{"empty patch", a.ScheduleID, `{}`, 400, "bad_request", ""},
		{"null enabled", a.ScheduleID, `{"enabled":null}`, 400, "validation_failed", "enabled"},
		{"null name", a.ScheduleID, `{"schedule_name":null}`, 400, "validation_failed", "schedule_name"},
		{"bad cron", a.ScheduleID, `{"start_cron":"every day"}`, 400, "validation_failed", "start_cron"},
		{"end equal to stored start", a.ScheduleID, `{"end_cron":"0 8 * * MON-FRI"}`, 400, "validation_failed", "end_cron"},
		{"bad timezone", a.ScheduleID, `{"timezone":"CEST"}`, 400, "validation_failed", "timezone"},
		{"unknown field", a.ScheduleID, `{"resources":[]}`, 400, "validation_failed", "resources"},
		{"id field", a.ScheduleID, `{"schedule_id":"x"}`, 400, "validation_failed", "schedule_id"},
	}
	app, audit := s.counts(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, contract.UpdateSchedule.Method, contract.UpdateSchedule.URL(tt.id), tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	s.wantCounts(t, app, audit)
	apitest.WantError(t, s.doAs(t, "", contract.UpdateSchedule.Method, contract.UpdateSchedule.URL(a.ScheduleID), `{"enabled":true}`), 400, "validation_failed", nucleus.HeaderUserID, "")
}

// Concurrent renames: each succeeds or is a 409 after the store's retries,
// and the audit log holds exactly one entry per successful change, each
// recording the name the previous change left.
func TestConcurrentScheduleUpdates(t *testing.T) {
	s := newService(t, options{})
	sc := s.createSchedule(t, "n0")
	var wg sync.WaitGroup
	codes := make([]int, 6)
	for i := range codes {
		wg.Go(func() {
			codes[i] = s.Do(t, contract.UpdateSchedule.Method, contract.UpdateSchedule.URL(sc.ScheduleID), fmt.Sprintf(`{"schedule_name":"n%d"}`, i+1)).Status
		})
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		if c == 200 {
			ok++
			continue
		}
		assert.Equal(t, 409, c, "status of a concurrent rename")
	}
	p := s.audit(t, contract.EntityLog.URL("schedule", sc.ScheduleID))
	require.Len(t, p.Entries, ok+1, "audit entries after %d successful updates", ok)
	// Oldest first: each change's old value is the previous change's new.
	prev := "n0"
	for i := len(p.Entries) - 2; i >= 0; i-- {
		var d struct {
			Changes map[string]struct{ Old, New string } `json:"changes"`
		}
		require.NoError(t, json.Unmarshal(p.Entries[i].Details, &d))
		c := d.Changes["schedule_name"]
		assert.Equal(t, prev, c.Old, "entry %d: old name", i)
		prev = c.New
	}
	var d nucleus.ScheduleDetail
	s.MustRoute(t, 200, contract.GetSchedule, "", &d, sc.ScheduleID)
	assert.Equal(t, prev, d.Schedule.ScheduleName, "stored name, against the last audited")
}
