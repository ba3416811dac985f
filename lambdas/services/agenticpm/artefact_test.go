package agenticpm_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

func TestArtefactLifecycle(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	path := "/projects/" + p.ID + "/artefacts/raid_log"

	apitest.WantError(t, s.Do(t, "GET", path, ""), 404, "not_found", "", "artefact")
	r := s.Do(t, "PUT", path, `{"content":{"items":[{"id":"R001","severity":"high","status":"open","title":"Vendor EOL","type":"risk"}]}}`)
	if r.Status != 201 || r.Header.Get("ETag") != `"1"` || r.Header.Get("Location") != "projects/"+p.ID+"/artefacts/raid_log" {
		t.Fatalf("create: %d %v %s", r.Status, r.Header, r.Body)
	}
	var a agenticpm.Artefact
	r.JSON(t, &a)
	if a.Version != 1 || a.PreviousVersion != nil || a.Type != agenticpm.ArtefactRAIDLog || a.ProjectID != p.ID || len(a.ID) != 36 {
		t.Errorf("created %+v", a)
	}

	// Update with If-Match, then with expectedVersion in the body.
	r = s.Do(t, "PUT", path, `{"content":{"items":[]}}`, "If-Match", `"1"`)
	if r.Status != 200 || r.Header.Get("ETag") != `"2"` {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	var v2 agenticpm.Artefact
	r.JSON(t, &v2)
	if v2.Version != 2 || string(v2.PreviousVersion) != `{"items":[{"id":"R001","severity":"high","status":"open","title":"Vendor EOL","type":"risk"}]}` || string(v2.Content) != `{"items":[]}` ||
		v2.ID != a.ID || v2.CreatedAt != a.CreatedAt || v2.UpdatedAt == a.UpdatedAt {
		t.Errorf("v2 %+v", v2)
	}
	var v3 agenticpm.Artefact
	s.Must(t, 200, "PUT", path, `{"content":{"items":[{"id":"R002","severity":"low","status":"closed","title":"Design late","type":"issue"}]},"expectedVersion":2}`, &v3)
	if v3.Version != 3 || string(v3.PreviousVersion) != `{"items":[]}` {
		t.Errorf("v3 %+v: the undo copy is one deep", v3)
	}
	var got agenticpm.Artefact
	r = s.Must(t, 200, "GET", path, "", &got)
	if got.Version != 3 || r.Header.Get("ETag") != `"3"` {
		t.Errorf("get %+v %v", got, r.Header)
	}

	s.Must(t, 201, "PUT", "/projects/"+p.ID+"/artefacts/delivery_state", `{"content":{"overall_status":"green","status_summary":"on track"}}`, nil)
	var list page[agenticpm.Artefact]
	s.Must(t, 200, "GET", "/projects/"+p.ID+"/artefacts", "", &list)
	if len(list.Items) != 2 || list.NextCursor != "" || list.Items[0].Type != agenticpm.ArtefactDeliveryState || list.Items[1].Type != agenticpm.ArtefactRAIDLog {
		t.Errorf("list %+v", list)
	}
	other := s.project(t, "")
	s.Must(t, 200, "GET", "/projects/"+other.ID+"/artefacts", "", &list)
	if list.Items == nil || len(list.Items) != 0 {
		t.Errorf("empty list = %+v", list)
	}

	before := s.Count(t)
	huge := `{"content":{"items":[{"id":"R001","severity":"high","status":"open","type":"risk","title":"` + strings.Repeat("x", agenticpm.MaxArtefactContentBytes) + `"}]}}`
	for _, tt := range []struct {
		name, path, body, ifMatch string
		status                    int
		code, field, msg          string
	}{
		{"stale version", path, `{"content":{"items":[]}}`, `"2"`, 409, "conflict", "", "at version 3, not 2"},
		{"future version", path, `{"content":{"items":[]}}`, `"9"`, 409, "conflict", "", "at version 3, not 9"},
		{"create existing", path, `{"content":{"items":[]}}`, "", 409, "conflict", "", "already exists at version 3"},
		{"create under missing project", "/projects/" + missingID + "/artefacts/raid_log", `{"content":{"items":[]}}`, "", 404, "not_found", "", "project"},
		{"update under missing project", "/projects/" + missingID + "/artefacts/raid_log", `{"content":{"items":[]}}`, `"1"`, 404, "not_found", "", "project"},
		{"update missing artefact", "/projects/" + p.ID + "/artefacts/decision_log", `{"content":{"decisions":[]}}`, `"1"`, 404, "not_found", "", "artefact"},
		{"malformed project id", "/projects/x/artefacts/raid_log", `{"content":{"items":[]}}`, "", 404, "not_found", "", ""},
		{"bad type", "/projects/" + p.ID + "/artefacts/roadmap", `{"content":{"items":[]}}`, "", 400, "validation_failed", "type", ""},
		{"missing content", path, `{}`, `"3"`, 400, "validation_failed", "content", ""},
		{"null content", path, `{"content":null}`, `"3"`, 400, "validation_failed", "content", ""},
		{"array content", path, `{"content":[]}`, `"3"`, 400, "validation_failed", "content", ""},
		{"unknown field", path, `{"content":{"items":[]},"version":4}`, `"3"`, 400, "validation_failed", "version", ""},
		{"bad If-Match", path, `{"content":{"items":[]}}`, `*`, 400, "validation_failed", "If-Match", ""},
		{"negative expectedVersion", path, `{"content":{},"expectedVersion":-1}`, "", 400, "validation_failed", "expectedVersion", ""},
		{"expectedVersion past 2^53-1", path, `{"content":{},"expectedVersion":9007199254740992}`, "", 400, "validation_failed", "expectedVersion", ""},
		{"If-Match past 2^53-1", path, `{"content":{}}`, `"9223372036854775807"`, 400, "validation_failed", "If-Match", ""},
		{"expectedVersion past int64", path, `{"content":{},"expectedVersion":99999999999999999999}`, "", 400, "validation_failed", "expectedVersion", ""},
		{"string expectedVersion", path, `{"content":{},"expectedVersion":"3"}`, "", 400, "validation_failed", "expectedVersion", ""},
		{"versions disagree", path, `{"content":{},"expectedVersion":2}`, `"3"`, 400, "validation_failed", "expectedVersion", ""},
		{"content too large", path, huge, `"3"`, 413, "too_large", "", "content"},
		{"empty body", path, ``, `"3"`, 400, "bad_request", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var h []string
			if tt.ifMatch != "" {
				h = []string{"If-Match", tt.ifMatch}
			}
			apitest.WantError(t, s.Do(t, "PUT", tt.path, tt.body, h...), tt.status, tt.code, tt.field, tt.msg)
		})
	}
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d: a refused write wrote (orphan or phantom artefact)", before, after)
	}
	s.Must(t, 200, "GET", path, "", &got)
	if got.Version != 3 || string(got.Content) != `{"items":[{"id":"R002","severity":"low","status":"closed","title":"Design late","type":"issue"}]}` {
		t.Errorf("refused writes changed the artefact: %+v", got)
	}
	apitest.WantError(t, s.Do(t, "GET", "/projects/"+missingID+"/artefacts/raid_log", ""), 404, "not_found", "", "project")
	apitest.WantError(t, s.Do(t, "GET", "/projects/"+missingID+"/artefacts", ""), 404, "not_found", "", "project")
	apitest.WantError(t, s.Do(t, "GET", "/projects/"+p.ID+"/artefacts/nope", ""), 400, "validation_failed", "type", "")
}

// Concurrent writers of the same version: exactly one wins, the other gets
// 409 and must re-read; no update is lost silently.
func TestArtefactOptimisticLocking(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	path := "/projects/" + p.ID + "/artefacts/decision_log"
	s.Must(t, 201, "PUT", path, `{"content":{"decisions":[]}}`, nil)
	for round := 1; round <= 5; round++ {
		var wg sync.WaitGroup
		codes := make([]int, 3)
		for j := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[j] = s.Do(t, "PUT", path, `{"content":{"decisions":[{"id":"D`+string(rune('0'+j))+`","title":"t","decision":"d","status":"active"}]}}`, "If-Match", `"`+string(rune('0'+round))+`"`).Status
			}()
		}
		wg.Wait()
		wins := 0
		for _, c := range codes {
			if c == 200 {
				wins++
			} else if c != 409 {
				t.Errorf("round %d: status %d", round, c)
			}
		}
		if wins != 1 {
			t.Errorf("round %d: %v, want exactly one 200", round, codes)
		}
	}
	var got agenticpm.Artefact
	s.Must(t, 200, "GET", path, "", &got)
	if got.Version != 6 {
		t.Errorf("version %d, want 6", got.Version)
	}
	// Concurrent creation: one 201, the other 409.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for j := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[j] = s.Do(t, "PUT", "/projects/"+p.ID+"/artefacts/backlog_summary", `{"content":{"source":"jira","last_synced":"2026-02-04T10:30:00Z","summary":{"total_items":1}}}`).Status
		}()
	}
	wg.Wait()
	if codes[0]+codes[1] != 201+409 {
		t.Errorf("concurrent creates: %v", codes)
	}
}
