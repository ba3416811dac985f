package agenticpm_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

func TestCreateProject(t *testing.T) {
	s := newService(t, nil)
	body := func(fields ...string) string {
		m := map[string]string{"name": `"P"`, "source": `"jira"`, "sourceProjectKey": `"MCU"`, "autonomyLevel": `"tactical"`}
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i+1] == "" {
				delete(m, fields[i])
				continue
			}
			m[fields[i]] = fields[i+1]
		}
		var parts []string
		for k, v := range m {
			parts = append(parts, fmt.Sprintf("%q:%s", k, v))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	tests := []struct {
		name, body  string
		status      int
		code, field string
	}{
		{"minimal", body(), 201, "", ""},
		{"full", body("description", `"d"`, "status", `"paused"`, "config", `{"sprintLength":14,"big":12345678901234567890}`), 201, "", ""},
		{"empty body", ``, 400, "bad_request", ""},
		{"null body", `null`, 400, "bad_request", ""},
		{"array body", `[]`, 400, "bad_request", ""},
		{"malformed", `{"name":`, 400, "bad_request", ""},
		{"unknown field", body("owner", `"me"`), 400, "validation_failed", "owner"},
		{"client-chosen id", body("id", `"x"`), 400, "validation_failed", "id"},
		{"missing name", body("name", ""), 400, "validation_failed", "name"},
		{"null name", body("name", "null"), 400, "validation_failed", "name"},
		{"blank name", body("name", `"  "`), 400, "validation_failed", "name"},
		{"numeric name", body("name", "1"), 400, "validation_failed", "name"},
		{"name too long", body("name", `"`+strings.Repeat("n", agenticpm.MaxNameChars+1)+`"`), 400, "validation_failed", "name"},
		{"null description", body("description", "null"), 400, "validation_failed", "description"},
		{"bad status", body("status", `"done"`), 400, "validation_failed", "status"},
		{"empty status", body("status", `""`), 400, "validation_failed", "status"},
		{"null status", body("status", "null"), 400, "validation_failed", "status"},
		{"missing source", body("source", ""), 400, "validation_failed", "source"},
		{"bad source", body("source", `"trello"`), 400, "validation_failed", "source"},
		{"missing sourceProjectKey", body("sourceProjectKey", ""), 400, "validation_failed", "sourceProjectKey"},
		{"bad autonomyLevel", body("autonomyLevel", `"full"`), 400, "validation_failed", "autonomyLevel"},
		{"config not object", body("config", `[1]`), 400, "validation_failed", "config"},
		{"config null", body("config", `null`), 400, "validation_failed", "config"},
		{"config string", body("config", `"x"`), 400, "validation_failed", "config"},
		{"config number out of range", body("config", `{"n":1e200}`), 400, "validation_failed", "config.n"},
		{"config too deep", body("config", strings.Repeat(`{"a":`, 40)+"1"+strings.Repeat("}", 40)), 400, "validation_failed", "config"},
		{"config empty key", body("config", `{"":1}`), 400, "validation_failed", "config"},
		{"config too large", body("config", `{"x":"`+strings.Repeat("x", agenticpm.MaxProjectConfigBytes)+`"}`), 413, "too_large", ""},
		{"body too large", `{"name":"` + strings.Repeat("x", 2<<20) + `"}`, 413, "too_large", ""},
	}
	created := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "POST", "/projects", tt.body)
			if tt.status != 201 {
				apitest.WantError(t, r, tt.status, tt.code, tt.field, "")
				return
			}
			created++
			if r.Status != 201 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			var p agenticpm.Project
			r.JSON(t, &p)
			if r.Header.Get("Location") != "projects/"+p.ID || len(p.ID) != 36 || p.CreatedAt != p.UpdatedAt {
				t.Errorf("project %+v, Location %q", p, r.Header.Get("Location"))
			}
			item := s.raw(t, "PROJECT#"+p.ID, "METADATA")
			if item["GSI1PK"] != "STATUS#"+string(p.Status) || item["GSI1SK"] != "PROJECT#"+p.ID {
				t.Errorf("index keys %v %v", item["GSI1PK"], item["GSI1SK"])
			}
		})
	}
	if n := s.Count(t); n != created {
		t.Errorf("table holds %d items, want %d: a rejected request wrote", n, created)
	}

	// Defaults, and numbers that survive the round trip exactly.
	var p agenticpm.Project
	s.Must(t, 201, "POST", "/projects", body("config", `{"big":12345678901234567890,"f":0.33}`), &p)
	var got agenticpm.Project
	s.Must(t, 200, "GET", "/projects/"+p.ID, "", &got)
	if got.Status != agenticpm.ProjectActive || string(got.Config) != `{"big":12345678901234567890,"f":0.33}` {
		t.Errorf("got status %s config %s", got.Status, got.Config)
	}
	p = s.project(t, "")
	if string(p.Config) != "{}" {
		t.Errorf("default config = %s", p.Config)
	}
}

func TestGetProject(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	for _, tt := range []struct {
		name, id string
		status   int
	}{
		{"existing", p.ID, 200},
		{"unknown", missingID, 404},
		{"not a uuid", "abc", 404},
		{"uppercase", strings.ToUpper(p.ID), 404},
		{"huge", strings.Repeat("a", 3000), 400}, // over the platform's key bound
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "GET", "/projects/"+tt.id, "")
			if tt.status == 400 {
				apitest.WantError(t, r, 400, "validation_failed", "id", "")
				return
			}
			if tt.status != 200 {
				apitest.WantError(t, r, 404, "not_found", "", "project")
				return
			}
			var got agenticpm.Project
			r.JSON(t, &got)
			if got.ID != p.ID || got.Name != p.Name {
				t.Errorf("got %+v", got)
			}
		})
	}
	apitest.WantError(t, s.Do(t, "DELETE", "/projects/"+p.ID, ""), 405, "method_not_allowed", "", "")
	apitest.WantError(t, s.Do(t, "GET", "/nowhere", ""), 404, "not_found", "", "")
}

func TestUpdateProject(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, `{"name":"P","description":"old","source":"jira","sourceProjectKey":"MCU","autonomyLevel":"monitoring"}`)
	path := "/projects/" + p.ID

	var got agenticpm.Project
	s.Must(t, 200, "PATCH", path, `{"status":"paused","autonomyLevel":"artefact","config":{"k":"v"}}`, &got)
	if got.Status != agenticpm.ProjectPaused || got.AutonomyLevel != agenticpm.AutonomyArtefact || string(got.Config) != `{"k":"v"}` ||
		got.Name != "P" || got.Description != "old" || got.UpdatedAt == got.CreatedAt {
		t.Errorf("after patch: %+v", got)
	}
	if item := s.raw(t, "PROJECT#"+p.ID, "METADATA"); item["GSI1PK"] != "STATUS#paused" {
		t.Errorf("GSI1PK = %v: the index still lists the old status", item["GSI1PK"])
	}
	got = agenticpm.Project{}
	s.Must(t, 200, "PATCH", path, `{"description":null,"name":"Renamed"}`, &got)
	if got.Description != "" || got.Name != "Renamed" || got.Status != agenticpm.ProjectPaused {
		t.Errorf("after clearing description: %+v", got)
	}
	if _, ok := s.raw(t, "PROJECT#"+p.ID, "METADATA")["description"]; ok {
		t.Error("description still stored")
	}

	before := s.Count(t)
	for _, tt := range []struct {
		name, id, body string
		status         int
		code, field    string
	}{
		{"unknown project", missingID, `{"status":"active"}`, 404, "not_found", ""},
		{"unknown project, no status", missingID, `{"name":"x"}`, 404, "not_found", ""},
		{"malformed id", "nope", `{"name":"x"}`, 404, "not_found", ""},
		{"empty patch", p.ID, `{}`, 400, "bad_request", ""},
		{"null body", p.ID, `null`, 400, "bad_request", ""},
		{"bad status", p.ID, `{"status":"deleted"}`, 400, "validation_failed", "status"},
		{"null status", p.ID, `{"status":null}`, 400, "validation_failed", "status"},
		{"null name", p.ID, `{"name":null}`, 400, "validation_failed", "name"},
		{"blank name", p.ID, `{"name":""}`, 400, "validation_failed", "name"},
		{"null config", p.ID, `{"config":null}`, 400, "validation_failed", "config"},
		{"id", p.ID, `{"id":"x"}`, 400, "validation_failed", "id"},
		{"createdAt", p.ID, `{"createdAt":"x"}`, 400, "validation_failed", "createdAt"},
		{"numeric source", p.ID, `{"source":1}`, 400, "validation_failed", "source"},
		{"config too large", p.ID, `{"config":{"x":"` + strings.Repeat("x", agenticpm.MaxProjectConfigBytes) + `"}}`, 413, "too_large", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, "PATCH", "/projects/"+tt.id, tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d: a refused patch wrote", before, after)
	}
	if s.raw(t, "PROJECT#"+missingID, "METADATA") != nil {
		t.Error("a patch of a missing project created it")
	}
}

// Concurrent status changes from the same state: the update is conditioned
// on the status read, so one wins and the other is told the status moved.
func TestConcurrentProjectStatusChanges(t *testing.T) {
	s := newService(t, nil)
	for i := range 5 {
		p := s.project(t, "")
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for j, to := range []string{"paused", "archived"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[j] = s.Do(t, "PATCH", "/projects/"+p.ID, `{"status":"`+to+`"}`).Status
			}()
		}
		wg.Wait()
		// Both may succeed when one read happens after the other's write;
		// what must never happen is a 500 or a stale index key.
		for _, c := range codes {
			if c != 200 && c != 409 {
				t.Errorf("round %d: statuses %v", i, codes)
			}
		}
		item := s.raw(t, "PROJECT#"+p.ID, "METADATA")
		if item["GSI1PK"] != "STATUS#"+item["status"].(string) {
			t.Errorf("round %d: GSI1PK %v, status %v", i, item["GSI1PK"], item["status"])
		}
	}
}

func TestListProjectsByStatus(t *testing.T) {
	s := newService(t, nil)
	active := map[string]bool{}
	for range 7 {
		active[s.project(t, "").ID] = true
	}
	paused := s.project(t, `{"name":"P","status":"paused","source":"asana","sourceProjectKey":"123","autonomyLevel":"monitoring"}`)
	moved := s.project(t, "")
	s.Must(t, 200, "PATCH", "/projects/"+moved.ID, `{"status":"archived"}`, nil)

	got, sizes := all[agenticpm.Project](t, s, "/projects?status=active&limit=3")
	if fmt.Sprint(sizes) != "[3 3 1]" || len(got) != 7 {
		t.Errorf("page sizes %v, %d projects", sizes, len(got))
	}
	for _, p := range got {
		if !active[p.ID] {
			t.Errorf("listed %s (%s)", p.ID, p.Status)
		}
	}
	if got, _ := all[agenticpm.Project](t, s, "/projects?status=paused"); len(got) != 1 || got[0].ID != paused.ID {
		t.Errorf("paused: %+v", got)
	}
	if got, _ := all[agenticpm.Project](t, s, "/projects?status=archived"); len(got) != 1 || got[0].ID != moved.ID {
		t.Errorf("archived: %+v", got)
	}
	var pg page[agenticpm.Project]
	s.Must(t, 200, "GET", "/projects?status=active&limit=7", "", &pg)
	if len(pg.Items) != 7 || pg.NextCursor != "" {
		t.Errorf("exactly one full page: %d items, cursor %q", len(pg.Items), pg.NextCursor)
	}
	s.Must(t, 200, "GET", "/projects?status=active&limit=2", "", &pg)
	cur := pg.NextCursor
	for _, tt := range []struct{ name, query, field string }{
		{"missing status", "", "status"},
		{"bad status", "status=gone", "status"},
		{"unknown parameter", "status=active&stauts=x", "stauts"},
		{"limit zero", "status=active&limit=0", "limit"},
		{"limit too big", "status=active&limit=101", "limit"},
		{"limit not a number", "status=active&limit=ten", "limit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, "GET", "/projects?"+tt.query, ""), 400, "validation_failed", tt.field, "")
		})
	}
	for _, tt := range []struct{ name, query string }{
		{"cursor of another status", "status=paused&cursor=" + cur},
		{"garbage cursor", "status=active&cursor=bm90IGEgY3Vyc29y"},
		{"tampered cursor", "status=active&cursor=" + tamper(cur)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, "GET", "/projects?"+tt.query, ""), 400, "bad_request", "", "cursor")
		})
	}
}

func tamper(c string) string {
	b := []byte(c)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
