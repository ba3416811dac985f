package e2e

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	itsmclient "github.com/dynastack/dynastack/lambdas/client/itsm"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services"
)

// serve is the dev stage's handler of the service named name, with the
// environment and tables of its golden template, behind a local server.
func serve(t *testing.T, name string) *httptest.Server {
	t.Helper()
	tmpl, tables := testenv.Tables(t, testenv.Template(t, "dev", name))
	getenv := testenv.Getenv(t, testenv.ServiceEnv(t, tmpl, tables, name))
	build, ok := services.Lookup(name)
	require.True(t, ok, "%s: no service", name)
	h, err := build(t.Context(), getenv, ddbrecord.ClientOptions(getenv)...)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestITSMThroughTheTypedClient: the generated client
// (lambdas/client/itsm) creates a ticket, reads it back, finds it in its
// caller's listing and replays a create by its Idempotency-Key, against the
// real handler: the document the client is generated from and the routes
// the handler serves are the same API.
func TestITSMThroughTheTypedClient(t *testing.T) {
	srv := serve(t, "itsm")
	c, err := itsmclient.NewClientWithResponses(srv.URL)
	require.NoError(t, err)
	caller := "sess-" + uuid.NewString()
	key := uuid.NewString()
	body := itsmclient.CreateTicketJSONRequestBody{CallerId: &caller, IssueDescription: ptr("the printer is on fire")}

	created, err := c.CreateTicketWithResponse(t.Context(), &itsmclient.CreateTicketParams{IdempotencyKey: &key}, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), "create: %s", created.Body)
	require.NotNil(t, created.JSON201, "create: a typed ticket")
	assert.Equal(t, caller, created.JSON201.CallerId)
	assert.Equal(t, "the printer is on fire", created.JSON201.IssueDescription)

	again, err := c.CreateTicketWithResponse(t.Context(), &itsmclient.CreateTicketParams{IdempotencyKey: &key}, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, again.StatusCode(), "replay: %s", again.Body)
	assert.Equal(t, "true", again.HTTPResponse.Header.Get("Idempotent-Replayed"), "replay")
	assert.Equal(t, created.JSON201.TicketId, again.JSON201.TicketId, "replay: the same ticket")

	id, err := uuid.Parse(created.JSON201.TicketId)
	require.NoError(t, err, "ticket_id is a UUID")
	got, err := c.GetTicketWithResponse(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), "get: %s", got.Body)
	assert.Equal(t, created.JSON201.TicketId, got.JSON200.TicketId)

	missing, err := c.GetTicketWithResponse(t.Context(), uuid.New())
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, missing.StatusCode(), "get a ticket that does not exist: %s", missing.Body)
	require.NotNil(t, missing.JSON404, "the platform's error shape, typed")
	assert.Equal(t, "not_found", missing.JSON404.Error.Code)

	list, err := c.ListTicketsWithResponse(t.Context(), &itsmclient.ListTicketsParams{Caller: caller})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, list.StatusCode(), "list: %s", list.Body)
	require.NotNil(t, list.JSON200.Tickets)
	require.Len(t, *list.JSON200.Tickets, 1, "the caller's one ticket (the replay created none)")
	assert.Equal(t, created.JSON201.TicketId, (*list.JSON200.Tickets)[0].TicketId)
}

func ptr[T any](v T) *T { return &v }
