package itsm_test

import (
	"sync"
	"testing"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// POST /tickets with an Idempotency-Key: a retry answers the first answer
// and creates nothing; the key with another body is refused; twenty
// concurrent requests with one key create one ticket.
func TestCreateWithIdempotencyKey(t *testing.T) {
	s := newService(t, options{})
	body := `{"caller_id":"sess-poc-user-001","issue_description":"VPN drops"}`
	first := s.Do(t, contract.CreateTicket.Method, contract.CreateTicket.URL(), body, api.IdempotencyHeader, "k-1")
	again := s.Do(t, contract.CreateTicket.Method, contract.CreateTicket.URL(), body, api.IdempotencyHeader, "k-1")
	require.Equal(t, 201, first.Status, "first: %s", first.Body)
	require.Equal(t, 201, again.Status, "again: %s", again.Body)
	require.Equal(t, string(first.Body), string(again.Body), "a retry answers the first answer")
	require.Equal(t, first.Header.Get("Location"), again.Header.Get("Location"), "a retry's Location")
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"), "a replay is marked Idempotent-Replayed")
	apitest.WantError(t, s.Do(t, contract.CreateTicket.Method, contract.CreateTicket.URL(), `{"caller_id":"sess-poc-user-001","issue_description":"other"}`, api.IdempotencyHeader, "k-1"),
		422, api.CodeKeyReused, "", "")
	apitest.WantError(t, s.Do(t, contract.CreateTicket.Method, contract.CreateTicket.URL(), body, api.IdempotencyHeader, "bad key"), 400, "bad_request", "", "")
	require.Equal(t, 1, tickets(t, s, "sess-poc-user-001"), "tickets after a create, its retry and a refused reuse")

	// Twenty at once with a new key: one creates; each other one either
	// waits its turn (409 in_progress) or replays the first answer.
	var wg sync.WaitGroup
	answers := make([]apitest.Response, 20)
	for i := range answers {
		wg.Go(func() {
			answers[i] = s.Do(t, contract.CreateTicket.Method, contract.CreateTicket.URL(), body, api.IdempotencyHeader, "k-2")
		})
	}
	wg.Wait()
	var created string
	for _, r := range answers {
		switch r.Status {
		case 201:
			if created != "" {
				assert.Equal(t, created, string(r.Body), "two different 201 answers for one key")
			}
			created = string(r.Body)
		case 409:
			apitest.WantError(t, r, 409, api.CodeInProgress, "", "")
		default:
			assert.Fail(t, "concurrent request: unexpected status", "%d %s", r.Status, r.Body)
		}
	}
	assert.Equal(t, 2, tickets(t, s, "sess-poc-user-001"), "tickets after twenty concurrent requests with one key")
}

// tickets counts a caller's tickets through the API.
func tickets(t *testing.T, s *service, caller string) int {
	t.Helper()
	var page struct{ Tickets []itsm.Summary }
	s.Must(t, 200, contract.ListTickets.Method, contract.ListTickets.URL()+"?caller="+caller, "", &page)
	return len(page.Tickets)
}
