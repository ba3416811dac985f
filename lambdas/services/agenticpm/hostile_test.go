package agenticpm_test

import (
	"testing"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
)

// TestHostileInput: every hostile input of apitest.Hostile is a 4xx that
// stores nothing, on every route; project config and artefact content are
// free-form documents.
func TestHostileInput(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	s.Hostile(t, s.H,
		apitest.Write{Method: contract.CreateProject.Method, Path: contract.CreateProject.URL(), Body: `{"name":"n","source":"jira","sourceProjectKey":"K","autonomyLevel":"monitoring","config":{"a":1}}`, Doc: "config"},
		apitest.Write{Method: contract.UpdateProject.Method, Path: contract.UpdateProject.URL(p.ID), Body: `{"description":"d"}`},
		apitest.Write{Method: contract.PutArtefact.Method, Path: contract.PutArtefact.URL(p.ID, "delivery_state"), Body: `{"content":{"overall_status":"green","status_summary":"on track"}}`, Doc: "content"},
	)
}
