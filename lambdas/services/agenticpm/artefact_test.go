package agenticpm_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

func TestArtefactLifecycle(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	path := contract.GetArtefact.URL(p.ID, "raid_log")

	apitest.WantError(t, s.Do(t, contract.GetArtefact.Method, path, ""), 404, "not_found", "", "artefact")
	r := s.Do(t, contract.PutArtefact.Method, path, `{"content":{"items":[{"id":"R001","severity":"high","status":"open","title":"Vendor EOL","type":"risk"}]}}`)
	require.Equal(t, 201, r.Status, "create: %s", r.Body)
	require.Equal(t, `"1"`, r.Header.Get("ETag"), "create: ETag")
	require.Equal(t, strings.TrimPrefix(contract.GetArtefact.URL(p.ID, "raid_log"), "/"), r.Header.Get("Location"), "create: Location")
	var a agenticpm.Artefact
	r.JSON(t, &a)
	assert.Equal(t, 1, a.Version, "created: version")
	assert.Nil(t, a.PreviousVersion, "created: previous version")
	assert.Equal(t, agenticpm.ArtefactRAIDLog, a.Type, "created: type")
	assert.Equal(t, p.ID, a.ProjectID, "created: project")
	assert.Len(t, a.ID, 36, "created: id")

	// Update with If-Match, then with expectedVersion in the body.
	r = s.Do(t, contract.PutArtefact.Method, path, `{"content":{"items":[]}}`, "If-Match", `"1"`)
	require.Equal(t, 200, r.Status, "update: %s", r.Body)
	require.Equal(t, `"2"`, r.Header.Get("ETag"), "update: ETag")
	var v2 agenticpm.Artefact
	r.JSON(t, &v2)
	assert.Equal(t, 2, v2.Version, "v2: version")
	assert.Equal(t, `{"items":[{"id":"R001","severity":"high","status":"open","title":"Vendor EOL","type":"risk"}]}`, string(v2.PreviousVersion), "v2: previous version")
	assert.Equal(t, `{"items":[]}`, string(v2.Content), "v2: content")
	assert.Equal(t, a.ID, v2.ID, "v2: id")
	assert.Equal(t, a.CreatedAt, v2.CreatedAt, "v2: createdAt")
	assert.NotEqual(t, a.UpdatedAt, v2.UpdatedAt, "v2: updatedAt")
	var v3 agenticpm.Artefact
	s.MustRoute(t, 200, contract.PutArtefact, `{"content":{"items":[{"id":"R002","severity":"low","status":"closed","title":"Design late","type":"issue"}]},"expectedVersion":2}`, &v3, p.ID, "raid_log")
	assert.Equal(t, 3, v3.Version, "v3: version")
	assert.Equal(t, `{"items":[]}`, string(v3.PreviousVersion), "v3: the undo copy is one deep")
	var got agenticpm.Artefact
	r = s.MustRoute(t, 200, contract.GetArtefact, "", &got, p.ID, "raid_log")
	assert.Equal(t, 3, got.Version, "get: version")
	assert.Equal(t, `"3"`, r.Header.Get("ETag"), "get: ETag")

	s.MustRoute(t, 201, contract.PutArtefact, `{"content":{"overall_status":"green","status_summary":"on track"}}`, nil, p.ID, "delivery_state")
	var list page[agenticpm.Artefact]
	s.MustRoute(t, 200, contract.ListArtefacts, "", &list, p.ID)
	var types []agenticpm.ArtefactType
	for _, a := range list.Items {
		types = append(types, a.Type)
	}
	assert.Equal(t, []agenticpm.ArtefactType{agenticpm.ArtefactDeliveryState, agenticpm.ArtefactRAIDLog}, types, "list: types in order")
	assert.Empty(t, list.NextCursor, "list: cursor")
	other := s.project(t, "")
	s.MustRoute(t, 200, contract.ListArtefacts, "", &list, other.ID)
	assert.NotNil(t, list.Items, "empty list: items is [], not null")
	assert.Empty(t, list.Items, "empty list")

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
		{"create under missing project", contract.GetArtefact.URL(missingID, "raid_log"), `{"content":{"items":[]}}`, "", 404, "not_found", "", "project"},
		{"update under missing project", contract.GetArtefact.URL(missingID, "raid_log"), `{"content":{"items":[]}}`, `"1"`, 404, "not_found", "", "project"},
		{"update missing artefact", contract.GetArtefact.URL(p.ID, "decision_log"), `{"content":{"decisions":[]}}`, `"1"`, 404, "not_found", "", "artefact"},
		{"malformed project id", contract.GetArtefact.URL("x", "raid_log"), `{"content":{"items":[]}}`, "", 404, "not_found", "", ""},
		{"bad type", contract.GetArtefact.URL(p.ID, "roadmap"), `{"content":{"items":[]}}`, "", 400, "validation_failed", "type", ""},
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
	assert.Equal(t, before, s.Count(t), "items: a refused write wrote (orphan or phantom artefact)")
	s.MustRoute(t, 200, contract.GetArtefact, "", &got, p.ID, "raid_log")
	assert.Equal(t, 3, got.Version, "refused writes changed the artefact: version")
	assert.Equal(t, `{"items":[{"id":"R002","severity":"low","status":"closed","title":"Design late","type":"issue"}]}`, string(got.Content), "refused writes changed the artefact: content")
	apitest.WantError(t, s.Do(t, contract.GetArtefact.Method, contract.GetArtefact.URL(missingID, "raid_log"), ""), 404, "not_found", "", "project")
	apitest.WantError(t, s.Do(t, contract.ListArtefacts.Method, contract.ListArtefacts.URL(missingID), ""), 404, "not_found", "", "project")
	apitest.WantError(t, s.Do(t, contract.GetArtefact.Method, contract.GetArtefact.URL(p.ID, "nope"), ""), 400, "validation_failed", "type", "")
}

// Concurrent writers of the same version: exactly one wins, the other gets
// 409 and must re-read; no update is lost silently.
func TestArtefactOptimisticLocking(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	path := contract.GetArtefact.URL(p.ID, "decision_log")
	s.MustRoute(t, 201, contract.PutArtefact, `{"content":{"decisions":[]}}`, nil, p.ID, "decision_log")
	for round := 1; round <= 5; round++ {
		var wg sync.WaitGroup
		codes := make([]int, 3)
		for j := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[j] = s.Do(t, contract.PutArtefact.Method, path, `{"content":{"decisions":[{"id":"D`+string(rune('0'+j))+`","title":"t","decision":"d","status":"active"}]}}`, "If-Match", `"`+string(rune('0'+round))+`"`).Status
			}()
		}
		wg.Wait()
		wins := 0
		for _, c := range codes {
			if c == 200 {
				wins++
			} else {
				assert.Equal(t, 409, c, "round %d: status", round)
			}
		}
		assert.Equal(t, 1, wins, "round %d: %v, want exactly one 200", round, codes)
	}
	var got agenticpm.Artefact
	s.MustRoute(t, 200, contract.GetArtefact, "", &got, p.ID, "decision_log")
	assert.Equal(t, 6, got.Version, "version")
	// Concurrent creation: one 201, the other 409.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for j := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[j] = s.Do(t, contract.PutArtefact.Method, contract.PutArtefact.URL(p.ID, "backlog_summary"), `{"content":{"source":"jira","last_synced":"2026-02-04T10:30:00Z","summary":{"total_items":1}}}`).Status
		}()
	}
	wg.Wait()
	assert.ElementsMatch(t, []int{201, 409}, codes, "concurrent creates")
}
