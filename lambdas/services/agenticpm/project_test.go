package agenticpm_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
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
			r := s.Do(t, contract.CreateProject.Method, contract.CreateProject.URL(), tt.body)
			if tt.status != 201 {
				apitest.WantError(t, r, tt.status, tt.code, tt.field, "")
				return
			}
			created++
			require.Equal(t, 201, r.Status, "create: %s", r.Body)
			var p agenticpm.Project
			r.JSON(t, &p)
			assert.Equal(t, strings.TrimPrefix(contract.GetProject.URL(p.ID), "/"), r.Header.Get("Location"), "Location")
			assert.Len(t, p.ID, 36, "id")
			assert.Equal(t, p.CreatedAt, p.UpdatedAt, "updatedAt of a new project")
			item := s.raw(t, "PROJECT#"+p.ID, "METADATA")
			assert.Equal(t, "STATUS#"+string(p.Status), item["GSI1PK"], "GSI1PK")
			assert.Equal(t, "PROJECT#"+p.ID, item["GSI1SK"], "GSI1SK")
		})
	}
	assert.Equal(t, created, s.Count(t), "items: a rejected request wrote")

	// Defaults, and numbers that survive the round trip exactly.
	var p agenticpm.Project
	s.MustRoute(t, 201, contract.CreateProject, body("config", `{"big":12345678901234567890,"f":0.33}`), &p)
	var got agenticpm.Project
	s.MustRoute(t, 200, contract.GetProject, "", &got, p.ID)
	assert.Equal(t, agenticpm.ProjectActive, got.Status, "default status")
	assert.Equal(t, `{"big":12345678901234567890,"f":0.33}`, string(got.Config), "config")
	p = s.project(t, "")
	assert.Equal(t, "{}", string(p.Config), "default config")
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
			r := s.Do(t, contract.GetProject.Method, contract.GetProject.URL(tt.id), "")
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
			assert.Equal(t, p.ID, got.ID, "id")
			assert.Equal(t, p.Name, got.Name, "name")
		})
	}
	apitest.WantError(t, s.Do(t, "DELETE", contract.GetProject.URL(p.ID), ""), 405, "method_not_allowed", "", "")
	apitest.WantError(t, s.Do(t, "GET", "/nowhere", ""), 404, "not_found", "", "")
}

func TestUpdateProject(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, `{"name":"P","description":"old","source":"jira","sourceProjectKey":"MCU","autonomyLevel":"monitoring"}`)

	var got agenticpm.Project
	s.MustRoute(t, 200, contract.UpdateProject, `{"status":"paused","autonomyLevel":"artefact","config":{"k":"v"}}`, &got, p.ID)
	assert.Equal(t, agenticpm.ProjectPaused, got.Status, "after patch: status")
	assert.Equal(t, agenticpm.AutonomyArtefact, got.AutonomyLevel, "after patch: autonomy level")
	assert.Equal(t, `{"k":"v"}`, string(got.Config), "after patch: config")
	assert.Equal(t, "P", got.Name, "after patch: name")
	assert.Equal(t, "old", got.Description, "after patch: description")
	assert.NotEqual(t, got.CreatedAt, got.UpdatedAt, "after patch: updatedAt")
	assert.Equal(t, "STATUS#paused", s.raw(t, "PROJECT#"+p.ID, "METADATA")["GSI1PK"], "GSI1PK: the index still lists the old status")
	got = agenticpm.Project{}
	s.MustRoute(t, 200, contract.UpdateProject, `{"description":null,"name":"Renamed"}`, &got, p.ID)
	assert.Empty(t, got.Description, "after clearing description: description")
	assert.Equal(t, "Renamed", got.Name, "after clearing description: name")
	assert.Equal(t, agenticpm.ProjectPaused, got.Status, "after clearing description: status")
	assert.NotContains(t, s.raw(t, "PROJECT#"+p.ID, "METADATA"), "description", "description still stored")

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
			apitest.WantError(t, s.Do(t, contract.UpdateProject.Method, contract.UpdateProject.URL(tt.id), tt.body), tt.status, tt.code, tt.field, "")
		})
	}
	assert.Equal(t, before, s.Count(t), "items: a refused patch wrote")
	assert.Nil(t, s.raw(t, "PROJECT#"+missingID, "METADATA"), "a patch of a missing project created it")
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
				codes[j] = s.Do(t, contract.UpdateProject.Method, contract.UpdateProject.URL(p.ID), `{"status":"`+to+`"}`).Status
			}()
		}
		wg.Wait()
		// Both may succeed when one read happens after the other's write;
		// what must never happen is a 500 or a stale index key.
		for _, c := range codes {
			assert.Contains(t, []int{200, 409}, c, "round %d: statuses %v", i, codes)
		}
		item := s.raw(t, "PROJECT#"+p.ID, "METADATA")
		assert.Equal(t, "STATUS#"+item["status"].(string), item["GSI1PK"], "round %d: GSI1PK of the stored status", i)
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
	s.MustRoute(t, 200, contract.UpdateProject, `{"status":"archived"}`, nil, moved.ID)

	got, sizes := all[agenticpm.Project](t, s, contract.ListProjects.URLQuery(svc.Values{contract.ParamStatus: "active", svc.Limit: "3"}))
	assert.Equal(t, []int{3, 3, 1}, sizes, "page sizes")
	assert.Len(t, got, 7, "active projects")
	for _, p := range got {
		assert.True(t, active[p.ID], "listed %s (%s)", p.ID, p.Status)
	}
	got, _ = all[agenticpm.Project](t, s, contract.ListProjects.URLQuery(svc.Values{contract.ParamStatus: "paused"}))
	assert.Equal(t, []string{paused.ID}, projectIDs(got), "paused")
	got, _ = all[agenticpm.Project](t, s, contract.ListProjects.URLQuery(svc.Values{contract.ParamStatus: "archived"}))
	assert.Equal(t, []string{moved.ID}, projectIDs(got), "archived")
	var pg page[agenticpm.Project]
	s.Must(t, 200, contract.ListProjects.Method, contract.ListProjects.URLQuery(svc.Values{contract.ParamStatus: "active", svc.Limit: "7"}), "", &pg)
	assert.Len(t, pg.Items, 7, "exactly one full page")
	assert.Empty(t, pg.NextCursor, "exactly one full page: cursor")
	s.Must(t, 200, contract.ListProjects.Method, contract.ListProjects.URLQuery(svc.Values{contract.ParamStatus: "active", svc.Limit: "2"}), "", &pg)
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
			apitest.WantError(t, s.Do(t, contract.ListProjects.Method, contract.ListProjects.URL()+"?"+tt.query, ""), 400, "validation_failed", tt.field, "")
		})
	}
	for _, tt := range []struct{ name, query string }{
		{"cursor of another status", "status=paused&cursor=" + cur},
		{"garbage cursor", "status=active&cursor=bm90IGEgY3Vyc29y"},
		{"tampered cursor", "status=active&cursor=" + tamper(cur)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, contract.ListProjects.Method, contract.ListProjects.URL()+"?"+tt.query, ""), 400, "bad_request", "", "cursor")
		})
	}
}

// projectIDs lists the projects' ids, in order.
func projectIDs(ps []agenticpm.Project) []string {
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	return ids
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
