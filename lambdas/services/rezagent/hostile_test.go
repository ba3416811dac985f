package rezagent_test

import (
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
)

// TestHostileInput: every hostile input of apitest.Hostile is a 4xx that
// stores nothing, on every route; the payload is the free-form document.
func TestHostileInput(t *testing.T) {
	s := newService(t, options{})
	m := s.create(t, "manual_notification", `{"text":"hi"}`)
	s.Hostile(t, s.H,
		apitest.Write{Method: "POST", Path: "/messages", Body: `{"message_type":"custom_event","created_by":"scheduler","payload":{"text":"hi"}}`, Doc: "payload"},
		apitest.Write{Method: "PATCH", Path: "/messages/" + m.MessageID, Body: `{"status":"queued"}`},
	)
}
