package agenticpm_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

const escalationBody = `{"title":"Delay beta?","context":{"risk":"vendor EOL"},"options":[{"option":"Delay","pros":["low risk"],"cons":["late"]},{"option":"Rush"}],"agentRecommendation":"Delay"}`

func (s *service) escalation(t testing.TB, projectID string) agenticpm.Escalation {
	t.Helper()
	var e agenticpm.Escalation
	s.MustRoute(t, 201, contract.CreateEscalation, escalationBody, &e, projectID)
	return e
}

func TestEscalations(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	e := s.escalation(t, p.ID)
	assert.Equal(t, agenticpm.EscalationPending, e.Status, "created: status")
	assert.Equal(t, p.ID, e.ProjectID, "created: project")
	assert.Equal(t, "Delay", e.AgentRecommendation, "created: recommendation")
	assert.Empty(t, e.DecidedAt, "created: decidedAt")
	item := s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+e.ID)
	assert.Equal(t, "ESCALATION#pending", item["GSI1PK"], "GSI1PK")
	assert.Equal(t, e.CreatedAt+"#"+e.ID, item["GSI1SK"], "GSI1SK")
	other := s.escalation(t, s.project(t, "").ID)

	pending, _ := all[agenticpm.Escalation](t, s, contract.ListEscalations.URLQuery(svc.Values{contract.ParamStatus: "pending", svc.Limit: "1"}))
	assert.Equal(t, []string{other.ID, e.ID}, escalationIDs(pending), "pending (newest first)")
	var mine page[agenticpm.Escalation]
	s.MustRoute(t, 200, contract.ListProjectEscalations, "", &mine, p.ID)
	if assert.Len(t, mine.Items, 1, "project escalations") {
		assert.Equal(t, e.ID, mine.Items[0].ID, "project escalation")
		assert.NotEmpty(t, string(mine.Items[0].Options), "project escalation: options")
	}

	decide := contract.Decide.URL(p.ID, e.ID)
	var d agenticpm.Escalation
	s.MustRoute(t, 200, contract.Decide, `{"userDecision":"Delay","userNotes":"agreed with sponsor"}`, &d, p.ID, e.ID)
	assert.Equal(t, agenticpm.EscalationDecided, d.Status, "decided: status")
	assert.Equal(t, "Delay", d.UserDecision, "decided: decision")
	assert.Equal(t, "agreed with sponsor", d.UserNotes, "decided: notes")
	assert.NotEmpty(t, d.DecidedAt, "decided: decidedAt")
	assert.Equal(t, e.Title, d.Title, "decided: title")
	assert.Equal(t, "ESCALATION#decided", s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+e.ID)["GSI1PK"], "GSI1PK: the pending view would keep listing it")
	got, _ := all[agenticpm.Escalation](t, s, contract.ListEscalations.URLQuery(svc.Values{contract.ParamStatus: "pending"}))
	assert.Equal(t, []string{other.ID}, escalationIDs(got), "pending after decision")
	got, _ = all[agenticpm.Escalation](t, s, contract.ListEscalations.URLQuery(svc.Values{contract.ParamStatus: "decided"}))
	assert.Equal(t, []string{e.ID}, escalationIDs(got), "decided")

	before := s.Count(t)
	unknown := "3f1d7e3a-9999-4000-8000-000000000000"
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, field, msg         string
	}{
		{"decide twice", "POST", decide, `{"userDecision":"Rush"}`, 409, "conflict", "", "is decided, not pending"},
		{"decide unknown escalation", contract.Decide.Method, contract.Decide.URL(p.ID, unknown), `{"userDecision":"x"}`, 404, "not_found", "", "escalation"},
		{"decide under unknown project", contract.Decide.Method, contract.Decide.URL(missingID, e.ID), `{"userDecision":"x"}`, 404, "not_found", "", "project"},
		{"decide malformed id", contract.Decide.Method, contract.Decide.URL(p.ID, "x"), `{"userDecision":"x"}`, 404, "not_found", "", "escalation"},
		{"decide without decision", "POST", decide, `{"userNotes":"n"}`, 400, "validation_failed", "userDecision", ""},
		{"decide null notes", "POST", decide, `{"userDecision":"x","userNotes":null}`, 400, "validation_failed", "userNotes", ""},
		{"decide with status", "POST", decide, `{"userDecision":"x","status":"expired"}`, 400, "validation_failed", "status", ""},
		{"create under unknown project", contract.CreateEscalation.Method, contract.CreateEscalation.URL(missingID), escalationBody, 404, "not_found", "", "project"},
		{"create without title", contract.CreateEscalation.Method, contract.CreateEscalation.URL(p.ID), `{"context":{},"options":[{}]}`, 400, "validation_failed", "title", ""},
		{"create without context", contract.CreateEscalation.Method, contract.CreateEscalation.URL(p.ID), `{"title":"t","options":[{}]}`, 400, "validation_failed", "context", ""},
		{"create context list", contract.CreateEscalation.Method, contract.CreateEscalation.URL(p.ID), `{"title":"t","context":[],"options":[{}]}`, 400, "validation_failed", "context", ""},
		{"create without options", contract.CreateEscalation.Method, contract.CreateEscalation.URL(p.ID), `{"title":"t","context":{}}`, 400, "validation_failed", "options", ""},
		{"create empty options", contract.CreateEscalation.Method, contract.CreateEscalation.URL(p.ID), `{"title":"t","context":{},"options":[]}`, 400, "validation_failed", "options", ""},
		{"create string options", contract.CreateEscalation.Method, contract.CreateEscalation.URL(p.ID), `{"title":"t","context":{},"options":["a"]}`, 400, "validation_failed", "options", ""},
		{"create with status", contract.CreateEscalation.Method, contract.CreateEscalation.URL(p.ID), `{"title":"t","context":{},"options":[{}],"status":"decided"}`, 400, "validation_failed", "status", ""},
		{"list bad status", contract.ListEscalations.Method, contract.ListEscalations.URLQuery(svc.Values{contract.ParamStatus: "open"}), "", 400, "validation_failed", "status", ""},
		{"list no status", contract.ListEscalations.Method, contract.ListEscalations.URL(), "", 400, "validation_failed", "status", ""},
		{"list unknown project", contract.ListProjectEscalations.Method, contract.ListProjectEscalations.URL(missingID), "", 404, "not_found", "", "project"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, tt.method, tt.path, tt.body), tt.status, tt.code, tt.field, tt.msg)
		})
	}
	assert.Equal(t, before, s.Count(t), "items: a refused request wrote (phantom escalation?)")
	assert.Nil(t, s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+unknown), "deciding a missing escalation created it")
}

// Two people decide the same escalation at once: exactly one decision is
// recorded, the other gets 409, and the stored decision is the winner's.
func TestConcurrentDecisions(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	for round := range 8 {
		e := s.escalation(t, p.ID)
		var wg sync.WaitGroup
		codes := make([]int, 2)
		bodies := make([]agenticpm.Escalation, 2)
		for j := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := s.Do(t, contract.Decide.Method, contract.Decide.URL(p.ID, e.ID), fmt.Sprintf(`{"userDecision":"choice %d"}`, j))
				codes[j] = r.Status
				if r.Status == 200 {
					r.JSON(t, &bodies[j])
				}
			}()
		}
		wg.Wait()
		require.ElementsMatch(t, []int{200, 409}, codes, "round %d: one 200 and one 409", round)
		winner := bodies[0]
		if codes[1] == 200 {
			winner = bodies[1]
		}
		stored := s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+e.ID)
		assert.Equal(t, winner.UserDecision, stored["userDecision"], "round %d: stored decision", round)
		assert.Equal(t, "ESCALATION#decided", stored["GSI1PK"], "round %d: GSI1PK", round)
	}
}

// escalationIDs lists the escalations' ids, in order.
func escalationIDs(es []agenticpm.Escalation) []string {
	var ids []string
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}
