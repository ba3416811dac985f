package e2e

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pmclient "github.com/dynastack/dynastack/lambdas/client/agenticpm"
	itsmclient "github.com/dynastack/dynastack/lambdas/client/itsm"
	nucleusclient "github.com/dynastack/dynastack/lambdas/client/nucleus"
	"github.com/dynastack/dynastack/lambdas/client/opt"
	rezclient "github.com/dynastack/dynastack/lambdas/client/rezagent"
	stakclient "github.com/dynastack/dynastack/lambdas/client/stak"
	"github.com/dynastack/dynastack/lambdas/devtools/apienv"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
)

// serve is the dev stage's handler of the service named name, with the
// environment and tables of its golden template, behind a local server.
func serve(t *testing.T, name string) *httptest.Server {
	t.Helper()
	tmpl, tables := testenv.Tables(t, testenv.Template(t, "dev", name))
	srv := httptest.NewServer(apienv.Handler(t, tmpl, tables, name, nil))
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
	body := itsmclient.CreateTicketJSONRequestBody{CallerId: &caller, IssueDescription: new("the printer is on fire")}

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

// TestServicesThroughTheTypedClients: each other service's generated
// client (lambdas/client/<service>) against its real handler, a short
// sequence each: what it creates it reads back by its id and finds in its
// listing, and a missing item is the platform's typed 404. Stak's end-user
// routes (a JWT API Gateway checks) are the smoke and load tests' (behind
// the runner's JWT check); its IAM routes are here.
func TestServicesThroughTheTypedClients(t *testing.T) {
	t.Run("rezagent", func(t *testing.T) {
		c, err := rezclient.NewClientWithResponses(serve(t, "rezagent").URL)
		require.NoError(t, err)
		var payload any = map[string]any{"text": "e2e"}
		created, err := c.CreateMessageWithResponse(t.Context(), nil, rezclient.CreateMessageJSONRequestBody{
			MessageType: new("e2e_test"), CreatedBy: new("e2e"), Payload: payload})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, created.StatusCode(), "create: %s", created.Body)
		id, err := uuid.Parse(created.JSON201.MessageId)
		require.NoError(t, err, "message_id is a UUID")
		got, err := c.GetMessageWithResponse(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, got.StatusCode(), "get: %s", got.Body)
		assert.Equal(t, "e2e", got.JSON200.CreatedBy, "get: created_by")
		list, err := c.ListMessagesWithResponse(t.Context(), &rezclient.ListMessagesParams{Limit: new(100)})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, list.StatusCode(), "list: %s", list.Body)
		require.NotNil(t, list.JSON200.Messages)
		found := false
		for _, m := range *list.JSON200.Messages {
			found = found || m.MessageId == id.String()
		}
		assert.True(t, found, "list: the newest page holds the message")
		missing, err := c.GetMessageWithResponse(t.Context(), uuid.New())
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, missing.StatusCode(), "get a message that does not exist: %s", missing.Body)
		require.NotNil(t, missing.JSON404, "the platform's error shape, typed")
		assert.Equal(t, "not_found", missing.JSON404.Error.Code)
	})
	t.Run("nucleus", func(t *testing.T) {
		c, err := nucleusclient.NewClientWithResponses(serve(t, "nucleus").URL)
		require.NoError(t, err)
		user := new("e2e@example.com")
		name := "e2e " + uuid.NewString()
		created, err := c.CreateScheduleWithResponse(t.Context(), &nucleusclient.CreateScheduleParams{XUserId: user}, nucleusclient.CreateScheduleJSONRequestBody{
			ScheduleName: &name, StartCron: new("0 8 * * MON-FRI"), EndCron: new("0 18 * * MON-FRI"), Timezone: new("UTC"), Enabled: new(false)})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, created.StatusCode(), "create: %s", created.Body)
		id, err := uuid.Parse(created.JSON201.ScheduleId)
		require.NoError(t, err, "schedule_id is a UUID")
		got, err := c.GetScheduleWithResponse(t.Context(), id, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, got.StatusCode(), "get: %s", got.Body)
		require.NotNil(t, got.JSON200.Schedule)
		assert.Equal(t, name, got.JSON200.Schedule.ScheduleName, "get: schedule_name")
		log, err := c.EntityLogWithResponse(t.Context(), "schedule", id.String(), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, log.StatusCode(), "audit: %s", log.Body)
		require.NotNil(t, log.JSON200.Entries)
		assert.Len(t, *log.JSON200.Entries, 1, "audit: the create's entry")
		deleted, err := c.DeleteScheduleWithResponse(t.Context(), id, &nucleusclient.DeleteScheduleParams{XUserId: user})
		require.NoError(t, err)
		require.Equal(t, http.StatusNoContent, deleted.StatusCode(), "delete: %s", deleted.Body)
		gone, err := c.GetScheduleWithResponse(t.Context(), id, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, gone.StatusCode(), "get after delete: %s", gone.Body)
		require.NotNil(t, gone.JSON404, "the platform's error shape, typed")
	})
	t.Run("stak", func(t *testing.T) {
		c, err := stakclient.NewClientWithResponses(serve(t, "stak").URL)
		require.NoError(t, err)
		tenant, inbox := "e2e-"+uuid.NewString()[:8], "ops"
		put, err := c.PutTenantWithResponse(t.Context(), tenant, stakclient.PutTenantJSONRequestBody{Title: new("e2e")})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, put.StatusCode(), "put tenant: %s", put.Body)
		got, err := c.GetTenantWithResponse(t.Context(), tenant)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, got.StatusCode(), "get tenant: %s", got.Body)
		assert.Equal(t, "e2e", got.JSON200.Title, "get tenant: title")
		box, err := c.PutInboxWithResponse(t.Context(), tenant, inbox, stakclient.PutInboxJSONRequestBody{Title: new("e2e inbox")})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, box.StatusCode(), "put inbox: %s", box.Body)
		var body stakclient.PublishJSONRequestBody
		body.Sender = new("e2e")
		to := opt.Set(&body.Audiences)
		to.Kind, to.Uids = new("users"), &[]string{"u1", "u2"}
		opt.Set(&body.Message).Title = new("e2e")
		published, err := c.PublishWithResponse(t.Context(), tenant, inbox, nil, body)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, published.StatusCode(), "publish: %s", published.Body)
		assert.NotEmpty(t, published.JSON201.Audiences.Id, "publish: the message's id")
		// (Its counters are the stream consumer's, which the local runner
		// and test/artifact run, not a handler alone.)
		read, err := c.GetInboxWithResponse(t.Context(), tenant, inbox)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, read.StatusCode(), "get inbox: %s", read.Body)
		assert.Equal(t, "e2e inbox", read.JSON200.Title, "get inbox: title")
	})
	t.Run("agenticpm", func(t *testing.T) {
		c, err := pmclient.NewClientWithResponses(serve(t, "agenticpm").URL)
		require.NoError(t, err)
		created, err := c.CreateProjectWithResponse(t.Context(), nil, pmclient.CreateProjectJSONRequestBody{Name: new("e2e"),
			Source: new("jira"), SourceProjectKey: new("E2E"), AutonomyLevel: new("monitoring")})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, created.StatusCode(), "create: %s", created.Body)
		id, err := uuid.Parse(created.JSON201.Id)
		require.NoError(t, err, "id is a UUID")
		event, err := c.RecordProjectEventWithResponse(t.Context(), id, nil, pmclient.EventRequest{EventType: new("heartbeat"), Severity: new("info"), Summary: new("e2e")})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, event.StatusCode(), "record event: %s", event.Body)
		events, err := c.ListProjectEventsWithResponse(t.Context(), id, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, events.StatusCode(), "list events: %s", events.Body)
		require.NotNil(t, events.JSON200.Items)
		require.Len(t, *events.JSON200.Items, 1, "list events: the one recorded")
		assert.Equal(t, event.JSON201.Id, (*events.JSON200.Items)[0].Id, "list events: its id")
		archived, err := c.UpdateProjectWithResponse(t.Context(), id, pmclient.UpdateProjectJSONRequestBody{Status: new("archived")})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, archived.StatusCode(), "archive: %s", archived.Body)
		assert.Equal(t, "archived", archived.JSON200.Status, "archive: status")
		missing, err := c.GetProjectWithResponse(t.Context(), uuid.New())
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, missing.StatusCode(), "get a project that does not exist: %s", missing.Body)
		require.NotNil(t, missing.JSON404, "the platform's error shape, typed")
	})
}
