package agenticpm_test

import (
	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// cannedHandler is s's handler on client c, logging as in Lambda (JSON,
// info level) into io.Discard.
func cannedHandler(t testing.TB, s *service, c *dynamodb.Client) http.Handler {
	cfg := servicetest.Config(t, agenticpm.ConfigFromEnv, map[string]string{contract.EnvTable: s.Table})
	cfg.Client, cfg.Logger = c, logx.New(io.Discard, slog.LevelInfo)
	withCredentialsKey(t, &cfg)
	return newAPI(cfg)
}

// recorded returns s with a handler whose DynamoDB calls rec records.
func recorded(t testing.TB, s *service) (*service, *ddbrecord.Recorder) {
	t.Helper()
	rec := &ddbrecord.Recorder{}
	cfg := servicetest.Config(t, agenticpm.ConfigFromEnv, map[string]string{contract.EnvTable: s.Table})
	cfg.Client = rec.Client(s.Client)
	cfg.Logger = slog.New(slog.DiscardHandler)
	withCredentialsKey(t, &cfg)
	r := *s
	r.H = newAPI(cfg)
	return &r, rec
}

// TestCost runs the cost cases in each mode (servicetest.Modes: Cost,
// LostAnswers, Throttled). Items here are under
// 1 KB; GSI1 projects every attribute.
func TestCost(t *testing.T) { servicetest.Modes(t, runCost) }

// BenchmarkAPI runs every operation of TestCost through the handler
// beside its raw SDK twin over recorded DynamoDB answers
// (servicetest.Canned; make bench).
func BenchmarkAPI(b *testing.B) { runCost(b, servicetest.Canned) }

func runCost(t testing.TB, mode servicetest.Mode) {
	base := newService(t, nil)
	faults := base.Faults(t, "agenticpm", mode)
	faults.Serve(func(c *dynamodb.Client) http.Handler { return cannedHandler(t, base, c) })
	s, rec := recorded(t, base)
	p := s.project(t, "")
	e := s.escalation(t, p.ID)
	old := s.escalation(t, p.ID)
	s.MustRoute(t, 201, contract.PutArtefact, `{"content":{"items":[]}}`, nil, p.ID, "raid_log")
	path := func(p string) func() string { return func() string { return p } }
	proj := contract.GetProject.URL(p.ID)
	heldBody := `{"actionType":"email_sent","description":"weekly status","heldUntil":"` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `"}`
	var release, cancel, plain agenticpm.Action
	s.MustRoute(t, 201, contract.RecordAction, heldBody, &release, p.ID)
	s.MustRoute(t, 201, contract.RecordAction, heldBody, &cancel, p.ID)
	s.MustRoute(t, 201, contract.RecordAction, `{"actionType":"jira_update","description":"comment"}`, &plain, p.ID)
	get := func(op, p string, min ddbrecord.Cost, note string) ddbrecord.Case {
		return ddbrecord.Case{Operation: op, Method: "GET", Path: path(p), Status: 200, Min: min, Note: note}
	}
	rows := servicetest.Measure(t, s.H, rec, faults, []ddbrecord.Case{
		{Operation: "POST /projects", Method: contract.CreateProject.Method, Path: path(contract.CreateProject.URL()), Body: projectBody, Status: 201, Min: ddbrecord.Cost{Requests: 1, Write: 2}, Note: "one PutItem only if new; GSI1 (`STATUS#<status>`) holds a copy"},
		get("GET /projects?status=", contract.ListProjects.URLQuery(svc.Values{contract.ParamStatus: "active"}), ddbrecord.Cost{Requests: 1, Read: 0.5}, "one eventually consistent Query of GSI1 `STATUS#<status>`"),
		get("GET /projects/{id}", proj, ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent GetItem"),
		{Operation: "PATCH /projects/{id}", Method: "PATCH", Path: path(proj), Body: `{"name":"MCU rebuild 2"}`, Status: 200, Min: ddbrecord.Cost{Requests: 1, Write: 2}, Note: "one UpdateItem conditioned on existence (decision 6); the GSI1 copy is rewritten"},
		{Operation: "PATCH /projects/{id} (status: moves the GSI1 copy)", Method: "PATCH", Path: path(proj), Body: `{"status":"paused"}`, Status: 200, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 3}, Note: "a consistent GetItem for the status to condition on (decision 6: projects have no state machine, so a concurrent change must be a 409), then one UpdateItem moving the GSI1 copy (a delete and a put)"},
		get("GET /projects/{id}/artefacts", contract.ListArtefacts.URL(p.ID), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent Query of `ARTEFACT#`"),
		get("GET /projects/{id}/artefacts/{type}", contract.GetArtefact.URL(p.ID, "raid_log"), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent GetItem"),
		{Operation: "PUT /projects/{id}/artefacts/{type} (create)", Method: contract.PutArtefact.Method, Path: path(contract.PutArtefact.URL(p.ID, "delivery_state")),
			Body: `{"content":{"overall_status":"green","status_summary":"on track"}}`, Status: 201, Min: ddbrecord.Cost{Requests: 1, Write: 10}, Note: "one TransactWriteItems, billed twice: the artefact put only if new, a check that the project exists (decision 12), and the `artefact_updated` event with its GSI1 copy and its `GLOBAL` reference (decision 20)"},
		{Operation: "PUT /projects/{id}/artefacts/{type} (update)", Method: contract.PutArtefact.Method, Path: path(contract.PutArtefact.URL(p.ID, "delivery_state")),
			Body: `{"content":{"overall_status":"amber","status_summary":"at risk"},"expectedVersion":1}`, Status: 200, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 8}, Note: "a strongly consistent GetItem (a transaction returns no item, and the answer is the artefact), then one TransactWriteItems, billed twice: the update conditioned on the version (decision 7) and the `artefact_updated` event with its GSI1 copy and `GLOBAL` reference"},
		{Operation: "POST /projects/{id}/artefacts/{type}/undo", Method: contract.UndoArtefact.Method, Path: path(contract.UndoArtefact.URL(p.ID, "delivery_state")), Header: []string{"If-Match", `"2"`},
			Status: 200, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 8}, Note: "the same GetItem, then one TransactWriteItems: `content = previousVersion`, `REMOVE previousVersion`, conditioned on the version read and on a previous version, with the `artefact_updated` event, billed twice"},
		{Operation: "POST /projects/{id}/events", Method: contract.RecordProjectEvent.Method, Path: path(contract.RecordProjectEvent.URL(p.ID)),
			Body: `{"eventType":"sync_done","severity":"info","summary":"synced"}`, Status: 201, Min: ddbrecord.Cost{Requests: 1, Write: 8}, Note: "one TransactWriteItems (decision 3): the event with its GSI1 (`EVENT#<date>`) copy, its `GLOBAL` reference, and the project check, billed twice"},
		get("GET /projects/{id}/events", contract.ListProjectEvents.URL(p.ID), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent Query of `EVENT#`, newest first"),
		{Operation: "POST /events", Method: contract.RecordGlobalEvent.Method, Path: path(contract.RecordGlobalEvent.URL()),
			Body: `{"eventType":"heartbeat","severity":"info","summary":"alive"}`, Status: 201, Min: ddbrecord.Cost{Requests: 1, Write: 2}, Note: "one PutItem only if new under `GLOBAL`, with its GSI1 copy"},
		get("GET /events", contract.ListEvents.URL(), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent Query of `GLOBAL`, newest first"),
		{Operation: "POST /projects/{id}/escalations", Method: contract.CreateEscalation.Method, Path: path(contract.CreateEscalation.URL(p.ID)), Body: escalationBody, Status: 201, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 12}, Note: "a strongly consistent GetItem of `escalation_expiry_hours` (no `expiresAt` given; with one, this read is skipped), then one TransactWriteItems, billed twice: the escalation with its GSI1 copy, the project check and the `escalation_created` event with its GSI1 copy and `GLOBAL` reference"},
		get("GET /projects/{id}/escalations", contract.ListProjectEscalations.URL(p.ID), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent Query of `ESCALATION#`"),
		{Operation: "POST /projects/{id}/escalations/{eid}/decision", Method: contract.Decide.Method, Path: path(contract.Decide.URL(p.ID, e.ID)),
			Body: `{"userDecision":"Delay"}`, Status: 200, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 12}, Note: "a strongly consistent GetItem (the answer, and a refusal before any write), then one TransactWriteItems, billed twice: the update conditioned on `pending` within its deadline (decision 6), moving the GSI1 copy, and the `escalation_decided` event with its GSI1 copy and `GLOBAL` reference"},
		get("GET /projects/{id}/escalations/{eid}", contract.GetEscalation.URL(p.ID, e.ID), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent GetItem"),
		{Operation: "POST /projects/{id}/escalations/{eid}/supersede", Method: contract.SupersedeEscalation.Method, Path: path(contract.SupersedeEscalation.URL(p.ID, old.ID)),
			Body: escalationBody, Status: 201, Min: ddbrecord.Cost{Requests: 3, Read: 2, Write: 16}, Note: "GetItems of the old escalation and of `escalation_expiry_hours` (skipped with `expiresAt`), then one TransactWriteItems, billed twice: the old one to `superseded` (a GSI1 move), the new one with its GSI1 copy, and `escalation_created` with its GSI1 copy and `GLOBAL` reference"},
		get("GET /escalations?status=", contract.ListEscalations.URLQuery(svc.Values{contract.ParamStatus: "pending"}), ddbrecord.Cost{Requests: 1, Read: 0.5}, "one eventually consistent Query of GSI1 `ESCALATION#<status>`"),
		{Operation: "POST /projects/{id}/actions", Method: contract.RecordAction.Method, Path: path(contract.RecordAction.URL(p.ID)),
			Body: `{"actionType":"send_report","description":"weekly report"}`, Status: 201, Min: ddbrecord.Cost{Requests: 1, Write: 4}, Note: "one TransactWriteItems: the action put only if new and the project check, billed twice"},
		{Operation: "POST /projects/{id}/actions (held)", Method: contract.RecordAction.Method, Path: path(contract.RecordAction.URL(p.ID)), Body: heldBody, Status: 201,
			Min: ddbrecord.Cost{Requests: 1, Write: 6}, Note: "one TransactWriteItems: the action put only if new with its `HOLD#pending` GSI1 entry, and the project check, billed twice"},
		{Operation: "POST /projects/{id}/actions (held, default time)", Method: contract.RecordAction.Method, Path: path(contract.RecordAction.URL(p.ID)), Body: `{"actionType":"email_sent","description":"weekly status","held":true}`, Status: 201,
			Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 6}, Note: "a strongly consistent GetItem of `hold_queue_minutes`, then the same TransactWriteItems"},
		get("GET /actions/held", contract.ListHeldActions.URL(), ddbrecord.Cost{Requests: 1, Read: 0.5}, "one eventually consistent Query of GSI1 `HOLD#pending`, first due first"),
		{Operation: "POST /projects/{id}/actions/{aid}/release", Method: contract.ReleaseAction.Method, Path: path(contract.ReleaseAction.URL(p.ID, release.ID)),
			Status: 200, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 12}, Note: "a strongly consistent Query of the ULID's millisecond finds the action (its sort key carries a microsecond timestamp the ULID lacks), then the gate: one TransactWriteItems updating the action into `HOLD#dispatch` (a GSI1 move) with the `action_taken` event, its GSI1 copy and its `GLOBAL` reference, billed twice. No bus here; with one, PutEvents and one UpdateItem (2 WCU) follow"},
		{Operation: "POST /projects/{id}/actions/{aid}/cancel", Method: contract.CancelAction.Method, Path: path(contract.CancelAction.URL(p.ID, cancel.ID)),
			Status: 200, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 2}, Note: "the same Query for the action's key, then one UpdateItem conditioned on a pending hold, removing its GSI1 entry"},
		{Operation: "POST /projects/{id}/actions/{aid}/executed", Method: contract.MarkActionExecuted.Method, Path: path(contract.MarkActionExecuted.URL(p.ID, plain.ID)),
			Status: 200, Min: ddbrecord.Cost{Requests: 2, Read: 1, Write: 1}, Note: "the same Query for the action's key, then one UpdateItem conditioned on not executed, never held, not cancelled (no index entry)"},
		get("GET /projects/{id}/actions", contract.ListActions.URL(p.ID), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent Query of `ACTION#`, newest first"),
		{Operation: "PUT /projects/{id}/checkpoints/{integration}/{key}", Method: contract.PutCheckpoint.Method, Path: path(contract.PutCheckpoint.URL(p.ID, "jira", "last_sync")),
			Body: `{"checkpointValue":"2026-02-04T10:00:00Z"}`, Status: 200, Min: ddbrecord.Cost{Requests: 1, Write: 4}, Note: "one TransactWriteItems: the checkpoint upserted and the project check, billed twice"},
		get("GET /projects/{id}/checkpoints/{integration}/{key}", contract.GetCheckpoint.URL(p.ID, "jira", "last_sync"), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent GetItem"),
		{Operation: "PUT /integrations/{name}", Method: contract.PutIntegration.Method, Path: path(contract.PutIntegration.URL("jira")),
			Body: `{"config":{"token":"s3cret"},"status":"active"}`, Status: 200, Min: ddbrecord.Cost{Requests: 1, Write: 1}, Note: "one UpdateItem upsert of the ciphertext (after one KMS Encrypt, not counted here)"},
		get("GET /integrations/{name}", contract.GetIntegration.URL("jira"), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent GetItem"),
		{Operation: "PUT /agent/config/{key}", Method: contract.PutAgentConfig.Method, Path: path(contract.PutAgentConfig.URL("poll_interval")), Body: `{"value":15}`, Status: 200, Min: ddbrecord.Cost{Requests: 1, Write: 1}, Note: "one PutItem upsert"},
		get("GET /agent/config/{key}", contract.GetAgentConfig.URL("poll_interval"), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent GetItem"),
		get("GET /agent/config", contract.ListAgentConfig.URL(), ddbrecord.Cost{Requests: 1, Read: 1}, "one strongly consistent Query of `CONFIG#`"),
	})
	if mode == servicetest.Cost {
		ddbrecord.CheckServiceDoc(t, "agenticpm", rows)
	}
}
