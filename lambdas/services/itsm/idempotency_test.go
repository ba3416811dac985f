package itsm_test

import (
	"sync"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
)

// POST /tickets with an Idempotency-Key: a retry answers the first answer
// and creates nothing; the key with another body is refused; twenty
// concurrent requests with one key create one ticket.
func TestCreateWithIdempotencyKey(t *testing.T) {
	s := newService(t, options{})
	body := `{"caller_id":"poc-user-001","issue_description":"VPN drops"}`
	first := s.Do(t, "POST", "/tickets", body, api.IdempotencyHeader, "k-1")
	again := s.Do(t, "POST", "/tickets", body, api.IdempotencyHeader, "k-1")
	if first.Status != 201 || again.Status != 201 || string(again.Body) != string(first.Body) || again.Header.Get("Location") != first.Header.Get("Location") {
		t.Fatalf("first %d %s, again %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	if again.Header.Get("Idempotent-Replayed") != "true" {
		t.Error("a replay is not marked Idempotent-Replayed")
	}
	apitest.WantError(t, s.Do(t, "POST", "/tickets", `{"caller_id":"poc-user-001","issue_description":"other"}`, api.IdempotencyHeader, "k-1"),
		422, api.CodeKeyReused, "", "")
	apitest.WantError(t, s.Do(t, "POST", "/tickets", body, api.IdempotencyHeader, "bad key"), 400, "bad_request", "", "")
	if n := tickets(t, s, "poc-user-001"); n != 1 {
		t.Fatalf("%d tickets after a create, its retry and a refused reuse, want 1", n)
	}

	// Twenty at once with a new key: one creates; each other one either
	// waits its turn (409 in_progress) or replays the first answer.
	var wg sync.WaitGroup
	answers := make([]apitest.Response, 20)
	for i := range answers {
		wg.Go(func() { answers[i] = s.Do(t, "POST", "/tickets", body, api.IdempotencyHeader, "k-2") })
	}
	wg.Wait()
	var created string
	for _, r := range answers {
		switch r.Status {
		case 201:
			if created != "" && string(r.Body) != created {
				t.Errorf("two different 201 answers for one key:\n%s\n%s", created, r.Body)
			}
			created = string(r.Body)
		case 409:
			apitest.WantError(t, r, 409, api.CodeInProgress, "", "")
		default:
			t.Errorf("concurrent request: %d %s", r.Status, r.Body)
		}
	}
	if n := tickets(t, s, "poc-user-001"); n != 2 {
		t.Errorf("%d tickets after twenty concurrent requests with one key, want 2", n)
	}
}

// tickets counts a caller's tickets through the API.
func tickets(t *testing.T, s *service, caller string) int {
	t.Helper()
	var page struct{ Tickets []itsm.Summary }
	s.Must(t, 200, "GET", "/tickets?caller="+caller, "", &page)
	return len(page.Tickets)
}
