package agenticpm_test

import (
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
)

// TestHostileInput: every hostile input of apitest.Hostile is a 4xx that
// stores nothing, on every route; project config and artefact content are
// free-form documents.
func TestHostileInput(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	s.Hostile(t, s.H,
		apitest.Write{Method: "POST", Path: "/projects", Body: `{"name":"n","source":"jira","sourceProjectKey":"K","autonomyLevel":"monitoring","config":{"a":1}}`, Doc: "config"},
		apitest.Write{Method: "PATCH", Path: "/projects/" + p.ID, Body: `{"description":"d"}`},
		apitest.Write{Method: "PUT", Path: "/projects/" + p.ID + "/artefacts/delivery_state", Body: `{"content":{"overall_status":"green","status_summary":"on track"}}`, Doc: "content"},
	)
}
