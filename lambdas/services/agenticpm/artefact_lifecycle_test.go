package agenticpm_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// Undo restores previousVersion, conditioned on the version the client
// read, one deep; every write (create, update, undo) writes
// artefact_updated to both feeds.
func TestArtefactUndo(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	v1 := `{"items":[]}`
	v2 := `{"items":[` + raidItem + `]}`
	s.MustRoute(t, 201, contract.PutArtefact, `{"content":`+v1+`}`, nil, p.ID, "raid_log")
	apitest.WantError(t, s.Do(t, contract.UndoArtefact.Method, contract.UndoArtefact.URL(p.ID, "raid_log"), "", "If-Match", `"1"`), 409, "conflict", "", "no previous version")
	s.MustRoute(t, 200, contract.PutArtefact, `{"content":`+v2+`,"expectedVersion":1}`, nil, p.ID, "raid_log")

	before := s.Count(t)
	apitest.WantError(t, s.Do(t, contract.UndoArtefact.Method, contract.UndoArtefact.URL(p.ID, "raid_log"), ""), 400, "validation_failed", "If-Match", "")
	apitest.WantError(t, s.Do(t, contract.UndoArtefact.Method, contract.UndoArtefact.URL(p.ID, "raid_log"), "", "If-Match", `"1"`), 409, "conflict", "", "at version 2, not 1")
	apitest.WantError(t, s.Do(t, contract.UndoArtefact.Method, contract.UndoArtefact.URL(p.ID, "decision_log"), "", "If-Match", `"1"`), 404, "not_found", "", "artefact")
	apitest.WantError(t, s.Do(t, contract.UndoArtefact.Method, contract.UndoArtefact.URL(missingID, "raid_log"), "", "If-Match", `"1"`), 404, "not_found", "", "project")
	assert.Equal(t, before, s.Count(t), "items: a refused undo wrote")

	r := s.Do(t, contract.UndoArtefact.Method, contract.UndoArtefact.URL(p.ID, "raid_log"), "", "If-Match", `"2"`)
	var u agenticpm.Artefact
	r.JSON(t, &u)
	require.Equal(t, 200, r.Status, "undo: %s", r.Body)
	require.Equal(t, `"3"`, r.Header.Get("ETag"), "undo: ETag")
	require.Equal(t, 3, u.Version, "undo: version")
	require.Equal(t, v1, string(u.Content), "undo: content")
	require.Nil(t, u.PreviousVersion, "undo: previous version")
	var got agenticpm.Artefact
	s.MustRoute(t, 200, contract.GetArtefact, "", &got, p.ID, "raid_log")
	assert.Equal(t, 3, got.Version, "stored after undo: version")
	assert.Equal(t, v1, string(got.Content), "stored after undo: content")
	assert.Nil(t, got.PreviousVersion, "stored after undo: previous version")
	apitest.WantError(t, s.Do(t, contract.UndoArtefact.Method, contract.UndoArtefact.URL(p.ID, "raid_log"), "", "If-Match", `"3"`), 409, "conflict", "", "undo is one deep")
	pn, gn := s.feed(t, p.ID, agenticpm.EventTypeArtefactUpdated)
	assert.Equal(t, 3, pn, "artefact_updated in the project feed (create, update, undo)")
	assert.Equal(t, 3, gn, "artefact_updated in GLOBAL (create, update, undo)")

	// Twenty concurrent undos of one version: one restores.
	s.MustRoute(t, 200, contract.PutArtefact, `{"content":`+v2+`,"expectedVersion":3}`, nil, p.ID, "raid_log")
	codes := make([]int, 20)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() {
			codes[i] = s.Do(t, contract.UndoArtefact.Method, contract.UndoArtefact.URL(p.ID, "raid_log"), "", "If-Match", `"4"`).Status
		})
	}
	wg.Wait()
	assert.Equal(t, 1, strings.Count(fmt.Sprint(codes), "200"), "%v: undos of one version", codes)
	assert.Equal(t, 19, strings.Count(fmt.Sprint(codes), "409"), "%v: refused undos of one version", codes)
	s.MustRoute(t, 200, contract.GetArtefact, "", &got, p.ID, "raid_log")
	assert.Equal(t, 5, got.Version, "after the race: version")
	assert.Equal(t, v1, string(got.Content), "after the race: content")
}

// Content is validated against its type's schema (section 4.2): each
// violation is a 400 naming its JSON path, nothing is written.
func TestArtefactSchemas(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	valid := map[agenticpm.ArtefactType]string{
		agenticpm.ArtefactDeliveryState:  `{"overall_status":"amber","status_summary":"Design assets late","current_sprint":{"name":"Sprint 12","start_date":"2026-02-03T00:00:00Z","end_date":"2026-02-14T00:00:00Z","goal":"Profile migration","progress":{"total_points":34,"completed_points":21,"in_progress_points":8,"blocked_points":5}},"milestones":[{"name":"Beta launch","due_date":"2026-03-15T00:00:00Z","status":"at_risk","notes":"API migration"}],"blockers":[{"id":"B001","description":"Design assets","owner":"Sarah K","raised_date":"2026-01-28T00:00:00Z","severity":"high","source_ticket":"MCU-142"}],"key_metrics":{"velocity_trend":"stable","avg_cycle_time_days":4.2,"open_blockers":1,"active_risks":3},"next_actions":["Follow up with Sarah"]}`,
		agenticpm.ArtefactRAIDLog:        `{"items":[{"id":"R001","type":"risk","title":"API vendor EOL","description":"Vendor A API decommissioned June 2026","severity":"critical","status":"open","owner":"Damien","raised_date":"2026-01-15T00:00:00Z","due_date":"2026-03-01T00:00:00Z","mitigation":"Evaluate Vendor B","resolution":null,"resolved_date":null,"source":"agent_detected","source_reference":"MCU-156","last_reviewed":"2026-02-01T00:00:00Z"}]}`,
		agenticpm.ArtefactDecisionLog:    `{"decisions":[{"id":"D001","title":"Delay beta","context":"Migration takes 3 weeks","options_considered":[{"option":"Delay","pros":["Lower risk"],"cons":["Late"]}],"decision":"Delay","rationale":"Lower risk","made_by":"user","date":"2026-02-03T00:00:00Z","status":"active","related_raid_items":["R001"]}]}`,
		agenticpm.ArtefactBacklogSummary: `{"source":"jira","last_synced":"2026-02-04T10:30:00Z","summary":{"total_items":47,"by_status":{"to_do":22,"in_progress":8},"by_priority":{"critical":2,"high":11}},"highlights":[{"ticket_id":"MCU-142","title":"Profile page","flag":"blocked","detail":"No update in 7 days","suggested_action":"Escalate"}],"refinement_candidates":[{"ticket_id":"MCU-155","title":"LinkedIn import","issue":"Missing acceptance criteria"}],"scope_notes":"3 new tickets"}`,
	}
	for _, typ := range agenticpm.ArtefactTypes {
		assert.NotNil(t, agenticpm.ArtefactSchema(typ), "no schema for %s", typ)
		s.MustRoute(t, 201, contract.PutArtefact, `{"content":`+valid[typ]+`}`, nil, p.ID, string(typ))
	}
	before := s.Digest(t)
	for _, tt := range []struct {
		typ          agenticpm.ArtefactType
		content      string
		field, words string
	}{
		{agenticpm.ArtefactDeliveryState, `{"status_summary":"x"}`, "content", "overall_status"},
		{agenticpm.ArtefactDeliveryState, `{"overall_status":"purple","status_summary":"x"}`, "content.overall_status", "green"},
		{agenticpm.ArtefactDeliveryState, `{"overall_status":"red","status_summary":"x","milestones":[{"name":"Beta","status":"late"}]}`, "content.milestones[0].status", "on_track"},
		{agenticpm.ArtefactDeliveryState, `{"overall_status":"red","status_summary":"x","current_sprint":{"name":"S","progress":{"total_points":"34"}}}`, "content.current_sprint.progress.total_points", "want number"},
		{agenticpm.ArtefactDeliveryState, `{"overall_status":"red","status_summary":"x","blockers":[{"id":"B1","description":"d","severity":"high","raised_date":"last week"}]}`, "content.blockers[0].raised_date", "date-time"},
		{agenticpm.ArtefactDeliveryState, `{"overall_status":"red","status_summary":"x","overal_status":"red"}`, "content", "overal_status"},
		{agenticpm.ArtefactRAIDLog, `{}`, "content", "items"},
		{agenticpm.ArtefactRAIDLog, `{"items":[{"id":"R1","type":"rumour","title":"t","severity":"low","status":"open"}]}`, "content.items[0].type", "risk"},
		{agenticpm.ArtefactRAIDLog, `{"items":[{"id":"R1","type":"risk","title":"t","severity":"low"}]}`, "content.items[0]", "status"},
		{agenticpm.ArtefactDecisionLog, `{"decisions":{}}`, "content.decisions", "want array"},
		{agenticpm.ArtefactDecisionLog, `{"decisions":[{"id":"D1","title":"t","decision":"d","status":"active","options_considered":[{"pros":["x"]}]}]}`, "content.decisions[0].options_considered[0]", "option"},
		{agenticpm.ArtefactBacklogSummary, `{"source":"trello","last_synced":"2026-02-04T10:30:00Z","summary":{"total_items":1}}`, "content.source", "jira"},
		{agenticpm.ArtefactBacklogSummary, `{"source":"jira","last_synced":"2026-02-04T10:30:00Z","summary":{"total_items":1,"by_status":{"to_do":-1}}}`, "content.summary.by_status.to_do", "minimum"},
	} {
		t.Run(string(tt.typ)+" "+tt.field, func(t *testing.T) {
			r := s.Do(t, contract.PutArtefact.Method, contract.PutArtefact.URL(p.ID, string(tt.typ)), `{"content":`+tt.content+`,"expectedVersion":1}`)
			apitest.WantError(t, r, 400, "validation_failed", tt.field, "")
			assert.Contains(t, string(r.Body), tt.words, "the message")
		})
	}
	assert.Equal(t, before, s.Digest(t), "a refused artefact write changed the table")
}
