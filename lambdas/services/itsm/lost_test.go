package itsm_test

import (
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
)

// A comment that DynamoDB applied but whose answer was lost on the way
// back is stored once, and the client gets its 201: the SDK's retry of the
// append fails its condition on the write's own token, and the ticket it
// finds is the answer. (Before, the retry appended the comment again.)
func TestCommentWithLostAnswerIsStoredOnce(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "poc-user-001", "VPN drops")

	lossy, proxy := s.throughFaults(t)

	proxy.Next(ddbfault.DropAnswer, 1)
	var answered itsm.Ticket
	lossy.Must(t, 201, "POST", "/tickets/"+tk.TicketID+"/comments", `{"comment_text":"still down"}`, &answered)
	if proxy.Faults() != 1 || proxy.Requests() != 2 {
		t.Fatalf("%d requests, %d faults: the lost answer was not retried", proxy.Requests(), proxy.Faults())
	}
	var stored itsm.Ticket
	s.Must(t, 200, "GET", "/tickets/"+tk.TicketID, "", &stored)
	if len(stored.Comments) != 1 || len(answered.Comments) != 1 || stored.Comments[0] != answered.Comments[0] {
		t.Errorf("answered %+v, stored %+v: want the one comment in both", answered.Comments, stored.Comments)
	}

	// A second comment, with nothing lost, is appended as usual.
	lossy.Must(t, 201, "POST", "/tickets/"+tk.TicketID+"/comments", `{"comment_text":"now it works"}`, &answered)
	if len(answered.Comments) != 2 {
		t.Errorf("second comment: %+v", answered.Comments)
	}
}

// Another comment landing between the lost answer and the SDK's retry
// does not make the retry append its comment again (a single last-write
// token did: make load under FAULTS=drop stored three comments for two
// acknowledged).
func TestCommentWithLostAnswerAndAnotherWriteIsStoredOnce(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "poc-user-001", "VPN drops")
	lossy, proxy := s.throughFaults(t)

	proxy.AfterDrop(func() {
		s.Must(t, 201, "POST", "/tickets/"+tk.TicketID+"/comments", `{"comment_text":"meanwhile"}`, nil)
	})
	proxy.Next(ddbfault.DropAnswer, 1)
	var answered itsm.Ticket
	lossy.Must(t, 201, "POST", "/tickets/"+tk.TicketID+"/comments", `{"comment_text":"still down"}`, &answered)
	if proxy.Faults() != 1 {
		t.Fatalf("%d faults: no answer was lost", proxy.Faults())
	}
	var stored itsm.Ticket
	s.Must(t, 200, "GET", "/tickets/"+tk.TicketID, "", &stored)
	var texts []string
	for _, c := range stored.Comments {
		texts = append(texts, c.CommentText)
	}
	if got := strings.Join(texts, ","); got != "still down,meanwhile" {
		t.Errorf("stored comments %s, want each once: still down,meanwhile", got)
	}
}

// A status change whose answer was lost answers 200 with the new status,
// not the 409 its own earlier attempt would otherwise cause.
func TestStatusChangeWithLostAnswerSucceeds(t *testing.T) {
	s := newService(t, options{})
	tk := s.create(t, "poc-user-001", "VPN drops")
	lossy, proxy := s.throughFaults(t)

	proxy.Next(ddbfault.DropAnswer, 1)
	var got itsm.Ticket
	lossy.Must(t, 200, "PATCH", "/tickets/"+tk.TicketID, `{"status":"in_progress"}`, &got)
	if got.Status != itsm.StatusInProgress || proxy.Requests() != 2 {
		t.Errorf("answered %s after %d requests", got.Status, proxy.Requests())
	}
	// Another caller's change is still refused with the status it found.
	r := s.Do(t, "PATCH", "/tickets/"+tk.TicketID, `{"status":"in_progress"}`)
	if r.Status != 409 {
		t.Errorf("a second change to in_progress: %d %s", r.Status, r.Body)
	}
}

// A create whose answer was lost answers 201 with the ticket, not 500, and
// stores one ticket: the retried Put finds the very item it wrote.
func TestCreateWithLostAnswerSucceedsOnce(t *testing.T) {
	s := newService(t, options{})
	lossy, proxy := s.throughFaults(t)

	proxy.Next(ddbfault.DropAnswer, 1)
	var tk itsm.Ticket
	lossy.Must(t, 201, "POST", "/tickets", `{"caller_id":"poc-user-001","issue_description":"VPN drops"}`, &tk)
	if proxy.Requests() != 2 {
		t.Fatalf("%d requests: the lost answer was not retried", proxy.Requests())
	}
	var stored itsm.Ticket
	s.Must(t, 200, "GET", "/tickets/"+tk.TicketID, "", &stored)
	if n := s.Count(t); n != 1 {
		t.Errorf("%d tickets stored, want 1", n)
	}
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
