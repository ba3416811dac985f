package agenticpm_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

const escalationBody = `{"title":"Delay beta?","context":{"risk":"vendor EOL"},"options":[{"option":"Delay","pros":["low risk"],"cons":["late"]},{"option":"Rush"}],"agentRecommendation":"Delay"}`

func (s *service) escalation(t testing.TB, projectID string) agenticpm.Escalation {
	t.Helper()
	var e agenticpm.Escalation
	s.Must(t, 201, "POST", "/projects/"+projectID+"/escalations", escalationBody, &e)
	return e
}

func TestEscalations(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	e := s.escalation(t, p.ID)
	if e.Status != agenticpm.EscalationPending || e.ProjectID != p.ID || e.AgentRecommendation != "Delay" || e.DecidedAt != "" {
		t.Errorf("created %+v", e)
	}
	item := s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+e.ID)
	if item["GSI1PK"] != "ESCALATION#pending" || item["GSI1SK"] != e.CreatedAt+"#"+e.ID {
		t.Errorf("index keys %v %v", item["GSI1PK"], item["GSI1SK"])
	}
	other := s.escalation(t, s.project(t, "").ID)

	pending, _ := all[agenticpm.Escalation](t, s, "/escalations?status=pending&limit=1")
	if len(pending) != 2 || pending[0].ID != other.ID || pending[1].ID != e.ID {
		t.Errorf("pending (newest first) %+v", pending)
	}
	var mine page[agenticpm.Escalation]
	s.Must(t, 200, "GET", "/projects/"+p.ID+"/escalations", "", &mine)
	if len(mine.Items) != 1 || mine.Items[0].ID != e.ID || string(mine.Items[0].Options) == "" {
		t.Errorf("project escalations %+v", mine)
	}

	decide := "/projects/" + p.ID + "/escalations/" + e.ID + "/decision"
	var d agenticpm.Escalation
	s.Must(t, 200, "POST", decide, `{"userDecision":"Delay","userNotes":"agreed with sponsor"}`, &d)
	if d.Status != agenticpm.EscalationDecided || d.UserDecision != "Delay" || d.UserNotes != "agreed with sponsor" || d.DecidedAt == "" || d.Title != e.Title {
		t.Errorf("decided %+v", d)
	}
	if item := s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+e.ID); item["GSI1PK"] != "ESCALATION#decided" {
		t.Errorf("GSI1PK %v: the pending view would keep listing it", item["GSI1PK"])
	}
	if got, _ := all[agenticpm.Escalation](t, s, "/escalations?status=pending"); len(got) != 1 || got[0].ID != other.ID {
		t.Errorf("pending after decision %+v", got)
	}
	if got, _ := all[agenticpm.Escalation](t, s, "/escalations?status=decided"); len(got) != 1 || got[0].ID != e.ID {
		t.Errorf("decided %+v", got)
	}

	before := s.Count(t)
	unknown := "3f1d7e3a-9999-4000-8000-000000000000"
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, field, msg         string
	}{
		{"decide twice", "POST", decide, `{"userDecision":"Rush"}`, 409, "conflict", "", "is decided, not pending"},
		{"decide unknown escalation", "POST", "/projects/" + p.ID + "/escalations/" + unknown + "/decision", `{"userDecision":"x"}`, 404, "not_found", "", "escalation"},
		{"decide under unknown project", "POST", "/projects/" + missingID + "/escalations/" + e.ID + "/decision", `{"userDecision":"x"}`, 404, "not_found", "", "project"},
		{"decide malformed id", "POST", "/projects/" + p.ID + "/escalations/x/decision", `{"userDecision":"x"}`, 404, "not_found", "", "escalation"},
		{"decide without decision", "POST", decide, `{"userNotes":"n"}`, 400, "validation_failed", "userDecision", ""},
		{"decide null notes", "POST", decide, `{"userDecision":"x","userNotes":null}`, 400, "validation_failed", "userNotes", ""},
		{"decide with status", "POST", decide, `{"userDecision":"x","status":"expired"}`, 400, "validation_failed", "status", ""},
		{"create under unknown project", "POST", "/projects/" + missingID + "/escalations", escalationBody, 404, "not_found", "", "project"},
		{"create without title", "POST", "/projects/" + p.ID + "/escalations", `{"context":{},"options":[{}]}`, 400, "validation_failed", "title", ""},
		{"create without context", "POST", "/projects/" + p.ID + "/escalations", `{"title":"t","options":[{}]}`, 400, "validation_failed", "context", ""},
		{"create context list", "POST", "/projects/" + p.ID + "/escalations", `{"title":"t","context":[],"options":[{}]}`, 400, "validation_failed", "context", ""},
		{"create without options", "POST", "/projects/" + p.ID + "/escalations", `{"title":"t","context":{}}`, 400, "validation_failed", "options", ""},
		{"create empty options", "POST", "/projects/" + p.ID + "/escalations", `{"title":"t","context":{},"options":[]}`, 400, "validation_failed", "options", ""},
		{"create string options", "POST", "/projects/" + p.ID + "/escalations", `{"title":"t","context":{},"options":["a"]}`, 400, "validation_failed", "options", ""},
		{"create with status", "POST", "/projects/" + p.ID + "/escalations", `{"title":"t","context":{},"options":[{}],"status":"decided"}`, 400, "validation_failed", "status", ""},
		{"list bad status", "GET", "/escalations?status=open", "", 400, "validation_failed", "status", ""},
		{"list no status", "GET", "/escalations", "", 400, "validation_failed", "status", ""},
		{"list unknown project", "GET", "/projects/" + missingID + "/escalations", "", 404, "not_found", "", "project"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, s.Do(t, tt.method, tt.path, tt.body), tt.status, tt.code, tt.field, tt.msg)
		})
	}
	if after := s.Count(t); after != before {
		t.Errorf("items %d → %d: a refused request wrote (phantom escalation?)", before, after)
	}
	if s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+unknown) != nil {
		t.Error("deciding a missing escalation created it")
	}
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
				r := s.Do(t, "POST", "/projects/"+p.ID+"/escalations/"+e.ID+"/decision", fmt.Sprintf(`{"userDecision":"choice %d"}`, j))
				codes[j] = r.Status
				if r.Status == 200 {
					r.JSON(t, &bodies[j])
				}
			}()
		}
		wg.Wait()
		if codes[0]+codes[1] != 200+409 {
			t.Fatalf("round %d: %v, want one 200 and one 409", round, codes)
		}
		winner := bodies[0]
		if codes[1] == 200 {
			winner = bodies[1]
		}
		if stored := s.raw(t, "PROJECT#"+p.ID, "ESCALATION#"+e.ID); stored["userDecision"] != winner.UserDecision || stored["GSI1PK"] != "ESCALATION#decided" {
			t.Errorf("round %d: stored %v, winner %+v", round, stored["userDecision"], winner)
		}
	}
}
