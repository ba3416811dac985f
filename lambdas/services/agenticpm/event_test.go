package agenticpm_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

func TestRecordEvent(t *testing.T) {
	c := apitest.NewClock(future().Add(24*time.Hour-3*time.Millisecond), time.Millisecond)
	s := newService(t, c.Now)
	p := s.project(t, "")
	var e agenticpm.Event
	s.Must(t, 201, "POST", "/projects/"+p.ID+"/events", `{"eventType":"signal_detected","severity":"warning","summary":"Sprint at risk","detail":{"points":5}}`, &e)
	if len(e.ID) != 26 || e.ProjectID != p.ID || string(e.Detail) != `{"points":5}` {
		t.Errorf("event %+v", e)
	}

	// Both copies exist; only the project copy is indexed and has detail.
	sk := "EVENT#" + e.CreatedAt + "#" + e.ID
	own, ref := s.raw(t, "PROJECT#"+p.ID, sk), s.raw(t, "GLOBAL", sk)
	if own == nil || ref == nil {
		t.Fatalf("dual write: project copy %v, global reference %v", own, ref)
	}
	created, _ := time.Parse(time.RFC3339Nano, e.CreatedAt)
	wantTTL := float64(created.Add(30 * 24 * time.Hour).Unix())
	if own["TTL"] != wantTTL || ref["TTL"] != wantTTL {
		t.Errorf("TTL %v %v, want %v", own["TTL"], ref["TTL"], wantTTL)
	}
	if own["GSI1PK"] != "EVENT#"+e.CreatedAt[:10] || own["GSI1SK"] != e.CreatedAt+"#"+e.ID {
		t.Errorf("index keys %v %v", own["GSI1PK"], own["GSI1SK"])
	}
	if _, ok := ref["GSI1PK"]; ok {
		t.Error("global reference is indexed: the date view would list the event twice")
	}
	if _, ok := ref["detail"]; ok {
		t.Error("global reference carries detail")
	}
	if ref["projectId"] != p.ID || ref["summary"] != "Sprint at risk" {
		t.Errorf("reference %v", ref)
	}

	// An event without a project: written once, under GLOBAL, indexed.
	var g agenticpm.Event
	s.Must(t, 201, "POST", "/events", `{"eventType":"heartbeat","severity":"info","summary":"tick"}`, &g)
	if g.ProjectID != "" || s.raw(t, "GLOBAL", "EVENT#"+g.CreatedAt+"#"+g.ID)["GSI1PK"] != "EVENT#"+g.CreatedAt[:10] {
		t.Errorf("global event %+v", g)
	}

	var feed page[agenticpm.Event]
	s.Must(t, 200, "GET", "/events", "", &feed)
	if len(feed.Items) != 2 || feed.Items[0].ID != g.ID || feed.Items[1].ID != e.ID || feed.Items[1].Detail != nil {
		t.Errorf("global feed %+v", feed)
	}
	// The clock crossed midnight between the two events: one per date.
	var day page[agenticpm.Event]
	s.Must(t, 200, "GET", "/events?date="+e.CreatedAt[:10], "", &day)
	if len(day.Items) != 1 || day.Items[0].ID != e.ID || string(day.Items[0].Detail) != `{"points":5}` {
		t.Errorf("events of %s: %+v", e.CreatedAt[:10], day)
	}
	s.Must(t, 200, "GET", "/events?date="+g.CreatedAt[:10], "", &day)
	if len(day.Items) != 1 || day.Items[0].ID != g.ID || e.CreatedAt[:10] == g.CreatedAt[:10] {
		t.Errorf("events of %s: %+v", g.CreatedAt[:10], day)
	}
	s.Must(t, 200, "GET", "/events?date=2020-01-01", "", &day)
	if day.Items == nil || len(day.Items) != 0 {
		t.Errorf("empty day %+v", day)
	}

	before := s.Count(t)
	for _, tt := range []struct {
		name, path, body string
		status           int
		code, field      string
	}{
		{"missing project", "/projects/" + missingID + "/events", `{"eventType":"heartbeat","severity":"info","summary":"s"}`, 404, "not_found", ""},
		{"malformed project", "/projects/nope/events", `{"eventType":"heartbeat","severity":"info","summary":"s"}`, 404, "not_found", ""},
		{"missing eventType", "/projects/" + p.ID + "/events", `{"severity":"info","summary":"s"}`, 400, "validation_failed", "eventType"},
		{"bad eventType", "/projects/" + p.ID + "/events", `{"eventType":"Signal Detected","severity":"info","summary":"s"}`, 400, "validation_failed", "eventType"},
		{"bad severity", "/projects/" + p.ID + "/events", `{"eventType":"error","severity":"fatal","summary":"s"}`, 400, "validation_failed", "severity"},
		{"null summary", "/projects/" + p.ID + "/events", `{"eventType":"error","severity":"error","summary":null}`, 400, "validation_failed", "summary"},
		{"detail not object", "/projects/" + p.ID + "/events", `{"eventType":"error","severity":"error","summary":"s","detail":"x"}`, 400, "validation_failed", "detail"},
		{"null detail", "/events", `{"eventType":"error","severity":"error","summary":"s","detail":null}`, 400, "validation_failed", "detail"},
		{"projectId in body", "/events", `{"eventType":"error","severity":"error","summary":"s","projectId":"` + p.ID + `"}`, 400, "validation_failed", "projectId"},
		{"detail too large", "/projects/" + p.ID + "/events", `{"eventType":"error","severity":"error","summary":"s","detail":{"x":"` + strings.Repeat("x", 400<<10) + `"}}`, 413, "too_large", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, "POST", tt.path, tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d: a refused event wrote", before, after)
	}
	for _, q := range []string{"date=2026-2-4", "date=2026-02-30", "date=", "day=2026-02-04"} {
		r := s.Do(t, "GET", "/events?"+q, "")
		if r.Status != 400 {
			t.Errorf("GET /events?%s = %d %s", q, r.Status, r.Body)
		}
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
		s.Must(t, 201, "POST", "/projects/"+p.ID+"/events", fmt.Sprintf(`{"eventType":"heartbeat","severity":"info","summary":"old %d"}`, i), nil)
	}
	c.Set(start.Add(20 * 24 * time.Hour))
	var want []string
	for i := range 7 {
		var e agenticpm.Event
		s.Must(t, 201, "POST", "/projects/"+p.ID+"/events", fmt.Sprintf(`{"eventType":"heartbeat","severity":"info","summary":"new %d"}`, i), &e)
		want = append([]string{e.ID}, want...)
	}
	c.Set(start.Add(31 * 24 * time.Hour)) // the first 40 have expired
	if n := s.Count(t); n != 1+2*47 {
		t.Fatalf("%d items: expired items should still be stored", n)
	}
	for _, path := range []string{"/projects/" + p.ID + "/events?limit=3", "/events?limit=3"} {
		got, sizes := all[agenticpm.Event](t, s, path)
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(want) || fmt.Sprint(sizes) != "[3 3 1]" {
			t.Errorf("%s: sizes %v\n got %v\nwant %v", path, sizes, ids, want)
		}
	}
	var day page[agenticpm.Event]
	s.Must(t, 200, "GET", "/events?date="+start.Format(time.DateOnly), "", &day)
	if len(day.Items) != 0 || day.NextCursor != "" {
		t.Errorf("expired day lists %d events, cursor %q", len(day.Items), day.NextCursor)
	}
	s.Must(t, 200, "GET", "/events?date="+start.Add(20*24*time.Hour).Format(time.DateOnly)+"&limit=7", "", &day)
	if len(day.Items) != 7 || day.NextCursor != "" {
		t.Errorf("live day: %d events, cursor %q", len(day.Items), day.NextCursor)
	}
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
		s.Must(t, 201, "POST", "/projects/"+p.ID+"/events", fmt.Sprintf(`{"eventType":"heartbeat","severity":"info","summary":"%d"}`, i), &e)
		want = append([]string{e.ID}, want...)
		for j := range 6 {
			s.putRaw(t, map[string]any{"PK": "PROJECT#" + p.ID, "SK": fmt.Sprintf("EVENT#%s#%02d", e.CreatedAt, j),
				"id": "x", "eventType": "heartbeat", "severity": "info", "summary": "expired", "createdAt": e.CreatedAt, "TTL": expired})
		}
	}
	got, sizes := all[agenticpm.Event](t, s, "/projects/"+p.ID+"/events?limit=4")
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) || fmt.Sprint(sizes) != "[4 4 2]" {
		t.Errorf("sizes %v\n got %v\nwant %v", sizes, ids, want)
	}
}

func TestEventCursors(t *testing.T) {
	s := newService(t, nil)
	a, b := s.project(t, ""), s.project(t, "")
	for range 3 {
		s.Must(t, 201, "POST", "/projects/"+a.ID+"/events", `{"eventType":"heartbeat","severity":"info","summary":"s"}`, nil)
	}
	var pa page[agenticpm.Event]
	s.Must(t, 200, "GET", "/projects/"+a.ID+"/events?limit=1", "", &pa)
	if pa.NextCursor == "" {
		t.Fatal("no cursor")
	}
	for _, path := range []string{
		"/projects/" + b.ID + "/events?cursor=" + pa.NextCursor, // another project
		"/events?cursor=" + pa.NextCursor,                       // another view
		"/projects/" + a.ID + "/actions?cursor=" + pa.NextCursor,
		"/projects/" + a.ID + "/events?cursor=" + tamper(pa.NextCursor),
		"/projects/" + a.ID + "/events?cursor=%%%",
	} {
		r := s.Do(t, "GET", path, "")
		if r.Status != 400 {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	apitest.WantError(t, s.Do(t, "GET", "/projects/"+missingID+"/events", ""), 404, "not_found", "", "project")
	var pb page[agenticpm.Event]
	s.Must(t, 200, "GET", "/projects/"+b.ID+"/events", "", &pb)
	if pb.Items == nil || len(pb.Items) != 0 {
		t.Errorf("project without events: %+v", pb)
	}
}
