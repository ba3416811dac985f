package itsm_test

import (
	"testing"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
)

// TestHostileInput: every hostile input of apitest.Hostile is a 4xx that
// stores nothing, on every route.
func TestHostileInput(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "sess-poc-user-001", "printer on fire")
	s.Hostile(t, s.H,
		apitest.Write{Method: contract.CreateTicket.Method, Path: contract.CreateTicket.URL(), Body: `{"caller_id":"sess-a","issue_description":"b"}`},
		apitest.Write{Method: contract.SetStatus.Method, Path: contract.SetStatus.URL(tk.TicketID), Body: `{"status":"in_progress"}`},
		apitest.Write{Method: contract.AddComment.Method, Path: contract.AddComment.URL(tk.TicketID), Body: `{"comment_text":"Tried restarting"}`},
	)
}
