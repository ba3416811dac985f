package itsm_test

import (
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// TestHostileInput: every hostile input of apitest.Hostile is a 4xx that
// stores nothing, on every route.
func TestHostileInput(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "poc-user-001", "printer on fire")
	apitest.Hostile(t, s.h, s.h.(api.Routed).Patterns(), func(t testing.TB) string { return testenv.Digest(t, s.client, s.table) },
		apitest.Write{Method: "POST", Path: "/tickets", Body: `{"caller_id":"a","issue_description":"b"}`},
		apitest.Write{Method: "PATCH", Path: "/tickets/" + tk.TicketID, Body: `{"status":"in_progress"}`},
		apitest.Write{Method: "POST", Path: "/tickets/" + tk.TicketID + "/comments", Body: `{"comment_text":"Tried restarting"}`},
	)
}
