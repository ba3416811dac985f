package itsm_test

import (
	"testing"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A comment that DynamoDB applied but whose answer was lost on the way
// back is stored once, and the client gets its 201: the SDK's retry of the
// append fails its condition on the write's own token, and the ticket it
// finds is the answer. (Before, the retry appended the comment again.)
func TestCommentWithLostAnswerIsStoredOnce(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "sess-poc-user-001", "VPN drops")

	lossy, proxy := s.throughFaults(t)

	proxy.Next(ddbfault.DropAnswer, 1)
	var answered itsm.Ticket
	lossy.MustRoute(t, 201, contract.AddComment, `{"comment_text":"still down"}`, &answered, tk.TicketID)
	require.Equal(t, 1, proxy.Faults(), "faults: the lost answer was not retried")
	require.Equal(t, 2, proxy.Requests(), "requests: the lost answer was not retried")
	var stored itsm.Ticket
	s.MustRoute(t, 200, contract.GetTicket, "", &stored, tk.TicketID)
	if assert.Len(t, stored.Comments, 1, "stored comments") && assert.Len(t, answered.Comments, 1, "answered comments") {
		assert.Equal(t, answered.Comments[0], stored.Comments[0], "want the one comment in both")
	}

	// A second comment, with nothing lost, is appended as usual.
	lossy.MustRoute(t, 201, contract.AddComment, `{"comment_text":"now it works"}`, &answered, tk.TicketID)
	assert.Len(t, answered.Comments, 2, "second comment")
}

// Another comment landing between the lost answer and the SDK's retry
// does not make the retry append its comment again (a single last-write
// token did: make load under FAULTS=drop stored three comments for two
// acknowledged).
func TestCommentWithLostAnswerAndAnotherWriteIsStoredOnce(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "sess-poc-user-001", "VPN drops")
	lossy, proxy := s.throughFaults(t)

	proxy.AfterDrop(func() {
		s.MustRoute(t, 201, contract.AddComment, `{"comment_text":"meanwhile"}`, nil, tk.TicketID)
	})
	proxy.Next(ddbfault.DropAnswer, 1)
	var answered itsm.Ticket
	lossy.MustRoute(t, 201, contract.AddComment, `{"comment_text":"still down"}`, &answered, tk.TicketID)
	require.Equal(t, 1, proxy.Faults(), "faults: no answer was lost")
	var stored itsm.Ticket
	s.MustRoute(t, 200, contract.GetTicket, "", &stored, tk.TicketID)
	var texts []string
	for _, c := range stored.Comments {
		texts = append(texts, c.CommentText)
	}
	assert.Equal(t, []string{"still down", "meanwhile"}, texts, "stored comments, each once")
}

// A status change whose answer was lost answers 200 with the new status,
// not the 409 its own earlier attempt would otherwise cause.
func TestStatusChangeWithLostAnswerSucceeds(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "sess-poc-user-001", "VPN drops")
	lossy, proxy := s.throughFaults(t)

	proxy.Next(ddbfault.DropAnswer, 1)
	var got itsm.Ticket
	lossy.MustRoute(t, 200, contract.SetStatus, `{"status":"in_progress"}`, &got, tk.TicketID)
	assert.Equal(t, itsm.StatusInProgress, got.Status, "answered status")
	assert.Equal(t, 2, proxy.Requests(), "requests")
	// Another caller's change is still refused with the status it found.
	r := s.Do(t, contract.SetStatus.Method, contract.SetStatus.URL(tk.TicketID), `{"status":"in_progress"}`)
	assert.Equal(t, 409, r.Status, "a second change to in_progress: %s", r.Body)
}

// A create whose answer was lost answers 201 with the ticket, not 500, and
// stores one ticket: the retried Put finds the very item it wrote.
func TestCreateWithLostAnswerSucceedsOnce(t *testing.T) {
	s := newService(t, options{})
	lossy, proxy := s.throughFaults(t)

	proxy.Next(ddbfault.DropAnswer, 1)
	var tk itsm.Ticket
	lossy.MustRoute(t, 201, contract.CreateTicket, `{"caller_id":"sess-poc-user-001","issue_description":"VPN drops"}`, &tk)
	require.Equal(t, 2, proxy.Requests(), "requests: the lost answer was not retried")
	var stored itsm.Ticket
	s.MustRoute(t, 200, contract.GetTicket, "", &stored, tk.TicketID)
	assert.Equal(t, 1, s.Count(t), "tickets stored")
}

// throughFaults is the service on the same tables, its DynamoDB client
// behind a fault proxy the test plans faults on.
func (s *service) throughFaults(t *testing.T) (servicetest.Service, *ddbfault.Proxy) {
	t.Helper()
	client, proxy := servicetest.FaultyClient(t, "itsm")
	cfg := servicetest.Config(t, itsm.ConfigFromEnv, s.Env(t, "itsm"))
	cfg.Client, cfg.Logger = client, servicetest.Logger()
	lossy := s.Service
	lossy.H = itsm.NewHandler(cfg)
	return lossy, proxy
}
