package agenticpm_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

func TestRecordEvent(t *testing.T) {
	c := apitest.NewClock(future().Add(24*time.Hour-3*time.Millisecond), time.Millisecond)
	s := newService(t, c.Now)
	p := s.project(t, "")
	var e agenticpm.Event
	s.MustRoute(t, 201, contract.RecordProjectEvent, `{"eventType":"signal_detected","severity":"warning","summary":"Sprint at risk","detail":{"points":5}}`, &e, p.ID)
	assert.Len(t, e.ID, 26, "event: id")
	assert.Equal(t, p.ID, e.ProjectID, "event: project")
	assert.Equal(t, `{"points":5}`, string(e.Detail), "event: detail")

	// Both copies exist; only the project copy is indexed and has detail.
	sk := "EVENT#" + e.CreatedAt + "#" + e.ID
	own, ref := s.raw(t, "PROJECT#"+p.ID, sk), s.raw(t, "GLOBAL", sk)
	require.NotNil(t, own, "dual write: project copy")
	require.NotNil(t, ref, "dual write: global reference")
	created, _ := time.Parse(time.RFC3339Nano, e.CreatedAt)
	wantTTL := float64(created.Add(30 * 24 * time.Hour).Unix())
	assert.Equal(t, wantTTL, own["TTL"], "TTL of the project copy")
	assert.Equal(t, wantTTL, ref["TTL"], "TTL of the global reference")
	assert.Equal(t, "EVENT#"+e.CreatedAt[:10], own["GSI1PK"], "GSI1PK")
	assert.Equal(t, e.CreatedAt+"#"+e.ID, own["GSI1SK"], "GSI1SK")
	assert.NotContains(t, ref, "GSI1PK", "global reference is indexed: the date view would list the event twice")
	assert.NotContains(t, ref, "detail", "global reference carries detail")
	assert.Equal(t, p.ID, ref["projectId"], "reference: project")
	assert.Equal(t, "Sprint at risk", ref["summary"], "reference: summary")

	// An event without a project: written once, under GLOBAL, indexed.
	var g agenticpm.Event
	s.MustRoute(t, 201, contract.RecordGlobalEvent, `{"eventType":"heartbeat","severity":"info","summary":"tick"}`, &g)
	assert.Empty(t, g.ProjectID, "global event: project")
	assert.Equal(t, "EVENT#"+g.CreatedAt[:10], s.raw(t, "GLOBAL", "EVENT#"+g.CreatedAt+"#"+g.ID)["GSI1PK"], "global event: GSI1PK")

	var feed page[agenticpm.Event]
	s.MustRoute(t, 200, contract.ListEvents, "", &feed)
	if assert.Equal(t, []string{g.ID, e.ID}, eventIDs(feed.Items), "global feed") {
		assert.Nil(t, feed.Items[1].Detail, "global feed: detail")
	}
	// The clock crossed midnight between the two events: one per date.
	var day page[agenticpm.Event]
	s.Must(t, 200, contract.ListEvents.Method, contract.ListEvents.URL()+"?date="+e.CreatedAt[:10], "", &day)
	if assert.Equal(t, []string{e.ID}, eventIDs(day.Items), "events of %s", e.CreatedAt[:10]) {
		assert.Equal(t, `{"points":5}`, string(day.Items[0].Detail), "events of %s: detail", e.CreatedAt[:10])
	}
	s.Must(t, 200, contract.ListEvents.Method, contract.ListEvents.URL()+"?date="+g.CreatedAt[:10], "", &day)
	assert.Equal(t, []string{g.ID}, eventIDs(day.Items), "events of %s", g.CreatedAt[:10])
	assert.NotEqual(t, e.CreatedAt[:10], g.CreatedAt[:10], "the clock did not cross midnight")
	s.Must(t, 200, contract.ListEvents.Method, contract.ListEvents.URLQuery(svc.Values{contract.ParamDate: "2020-01-01"}), "", &day)
	assert.NotNil(t, day.Items, "empty day: items is [], not null")
	assert.Empty(t, day.Items, "empty day")

	before := s.Count(t)
	for _, tt := range []struct {
		name, path, body string
		status           int
		code, field      string
	}{
		{"missing project", contract.ListProjectEvents.URL(missingID), `{"eventType":"heartbeat","severity":"info","summary":"s"}`, 404, "not_found", ""},
		{"malformed project", contract.ListProjectEvents.URL("nope"), `{"eventType":"heartbeat","severity":"info","summary":"s"}`, 404, "not_found", ""},
		{"missing eventType", contract.ListProjectEvents.URL(p.ID), `{"severity":"info","summary":"s"}`, 400, "validation_failed", "eventType"},
		{"bad eventType", contract.ListProjectEvents.URL(p.ID), `{"eventType":"Signal Detected","severity":"info","summary":"s"}`, 400, "validation_failed", "eventType"},
		{"bad severity", contract.ListProjectEvents.URL(p.ID), `{"eventType":"error","severity":"fatal","summary":"s"}`, 400, "validation_failed", "severity"},
		{"null summary", contract.ListProjectEvents.URL(p.ID), `{"eventType":"error","severity":"error","summary":null}`, 400, "validation_failed", "summary"},
		{"detail not object", contract.ListProjectEvents.URL(p.ID), `{"eventType":"error","severity":"error","summary":"s","detail":"x"}`, 400, "validation_failed", "detail"},
		{"null detail", contract.ListEvents.URL(), `{"eventType":"error","severity":"error","summary":"s","detail":null}`, 400, "validation_failed", "detail"},
		{"projectId in body", contract.ListEvents.URL(), `{"eventType":"error","severity":"error","summary":"s","projectId":"` + p.ID + `"}`, 400, "validation_failed", "projectId"},
		{"detail too large", contract.ListProjectEvents.URL(p.ID), `{"eventType":"error","severity":"error","summary":"s","detail":{"x":"` + strings.Repeat("x", 400<<10) + `"}}`, 413, "too_large", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, "POST", tt.path, tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	assert.Equal(t, before, s.Count(t), "items: a refused event wrote")
	for _, q := range []string{"date=2026-2-4", "date=2026-02-30", "date=", "day=2026-02-04"} {
		r := s.Do(t, contract.ListEvents.Method, contract.ListEvents.URL()+"?"+q, "")
		assert.Equal(t, 400, r.Status, "GET /events?%s: %s", q, r.Body)
	}
}

// Events past their TTL stay in DynamoDB for up to days; listings hide
// them and still fill their pages (the filter runs after Limit).
func TestEventFeedsHideExpired(t *testing.T) {
	c := apitest.NewClock(time.Time{}, time.Millisecond)
	s := newService(t, c.Now)
	p := s.project(t, "")
	start := future()
	c.Set(start)
	for i := range 40 {
		s.MustRoute(t, 201, contract.RecordProjectEvent, fmt.Sprintf(`{"eventType":"heartbeat","severity":"info","summary":"old %d"}`, i), nil, p.ID)
	}
	c.Set(start.Add(20 * 24 * time.Hour))
	var want []string
	for i := range 7 {
		var e agenticpm.Event
		s.MustRoute(t, 201, contract.RecordProjectEvent, fmt.Sprintf(`{"eventType":"heartbeat","severity":"info","summary":"new %d"}`, i), &e, p.ID)
		want = append([]string{e.ID}, want...)
	}
	c.Set(start.Add(31 * 24 * time.Hour)) // the first 40 have expired
	require.Equal(t, 1+2*47, s.Count(t), "items: expired items should still be stored")
	for _, path := range []string{contract.ListProjectEvents.URLQuery(svc.Values{svc.Limit: "3"}, p.ID), contract.ListEvents.URLQuery(svc.Values{svc.Limit: "3"})} {
		got, sizes := all[agenticpm.Event](t, s, path)
		assert.Equal(t, want, eventIDs(got), "%s: events", path)
		assert.Equal(t, []int{3, 3, 1}, sizes, "%s: page sizes", path)
	}
	var day page[agenticpm.Event]
	s.Must(t, 200, contract.ListEvents.Method, contract.ListEvents.URL()+"?date="+start.Format(time.DateOnly), "", &day)
	assert.Empty(t, day.Items, "expired day")
	assert.Empty(t, day.NextCursor, "expired day: cursor")
	s.Must(t, 200, contract.ListEvents.Method, contract.ListEvents.URL()+"?date="+start.Add(20*24*time.Hour).Format(time.DateOnly)+"&limit=7", "", &day)
	assert.Len(t, day.Items, 7, "live day")
	assert.Empty(t, day.NextCursor, "live day: cursor")
}

// Expired items between live ones (as a hand-written or late item could
// be): pages stay full and in order.
func TestPagesSkipExpiredInTheMiddle(t *testing.T) {
	c := apitest.NewClock(future(), time.Millisecond)
	s := newService(t, c.Now)
	expired := time.Now().Add(180 * 24 * time.Hour).Unix() // past for the service, not yet for DynamoDB Local
	p := s.project(t, "")
	var want []string
	for i := range 10 {
		var e agenticpm.Event
		s.MustRoute(t, 201, contract.RecordProjectEvent, fmt.Sprintf(`{"eventType":"heartbeat","severity":"info","summary":"%d"}`, i), &e, p.ID)
		want = append([]string{e.ID}, want...)
		for j := range 6 {
			s.putRaw(t, map[string]any{"PK": "PROJECT#" + p.ID, "SK": fmt.Sprintf("EVENT#%s#%02d", e.CreatedAt, j),
				"id": "x", "eventType": "heartbeat", "severity": "info", "summary": "expired", "createdAt": e.CreatedAt, "TTL": expired})
		}
	}
	got, sizes := all[agenticpm.Event](t, s, contract.ListProjectEvents.URLQuery(svc.Values{svc.Limit: "4"}, p.ID))
	assert.Equal(t, want, eventIDs(got), "events in order")
	assert.Equal(t, []int{4, 4, 2}, sizes, "page sizes")
}

func TestEventCursors(t *testing.T) {
	s := newService(t, nil)
	a, b := s.project(t, ""), s.project(t, "")
	for range 3 {
		s.MustRoute(t, 201, contract.RecordProjectEvent, `{"eventType":"heartbeat","severity":"info","summary":"s"}`, nil, a.ID)
	}
	var pa page[agenticpm.Event]
	s.Must(t, 200, contract.ListProjectEvents.Method, contract.ListProjectEvents.URLQuery(svc.Values{svc.Limit: "1"}, a.ID), "", &pa)
	require.NotEmpty(t, pa.NextCursor, "no cursor")
	for _, path := range []string{
		contract.ListProjectEvents.URL(b.ID) + "?cursor=" + pa.NextCursor, // another project
		contract.ListEvents.URL() + "?cursor=" + pa.NextCursor,            // another view
		contract.ListActions.URL(a.ID) + "?cursor=" + pa.NextCursor,
		contract.ListProjectEvents.URL(a.ID) + "?cursor=" + tamper(pa.NextCursor),
		contract.ListProjectEvents.URL(a.ID) + "?cursor=%%%",
	} {
		r := s.Do(t, "GET", path, "")
		assert.Equal(t, 400, r.Status, "%s: %s", path, r.Body)
	}
	apitest.WantError(t, s.Do(t, contract.ListProjectEvents.Method, contract.ListProjectEvents.URL(missingID), ""), 404, "not_found", "", "project")
	var pb page[agenticpm.Event]
	s.MustRoute(t, 200, contract.ListProjectEvents, "", &pb, b.ID)
	assert.NotNil(t, pb.Items, "project without events: items is [], not null")
	assert.Empty(t, pb.Items, "project without events")
}

// eventIDs lists the events' ids, in order.
func eventIDs(es []agenticpm.Event) []string {
	var ids []string
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}
