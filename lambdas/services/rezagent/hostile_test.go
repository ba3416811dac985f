package rezagent_test

import (
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/stretchr/testify/assert"
)

// TestHostileInput: every hostile input of apitest.Hostile is a 4xx that
// stores nothing, on every route; the payload is the free-form document.
func TestHostileInput(t *testing.T) {
	s := newService(t, options{})
	m := s.create(t, "manual_notification", `{"text":"hi"}`)
	s.Hostile(t, s.H,
		apitest.Write{Method: contract.CreateMessage.Method, Path: contract.CreateMessage.URL(), Body: `{"message_type":"custom_event","created_by":"scheduler","payload":{"text":"hi"}}`, Doc: "payload"},
		apitest.Write{Method: contract.SetStatus.Method, Path: contract.SetStatus.URL(m.MessageID), Body: `{"status":"queued"}`},
	)
}

// Names the caller chose are echoed cut at 64 characters: a payload key of
// 3,000 characters once came back whole.
func TestEchoedNamesAreCut(t *testing.T) {
	s := newService(t, options{})
	long := strings.Repeat("k", 3000)
	r := s.Do(t, contract.CreateMessage.Method, contract.CreateMessage.URL(), `{"message_type":"custom_event","created_by":"scheduler","payload":{"`+long+`":{"":1}}}`)
	apitest.WantError(t, r, 400, "validation_failed", "", "")
	assert.LessOrEqual(t, len(r.Body), 1024, "error size: %.300s", r.Body)
	assert.NotContains(t, string(r.Body), strings.Repeat("k", 65), "the error echoes the key whole")
}
