package agenticpm

import (
	"net/http"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// Operations describes each route of the contract for its OpenAPI document
// (docs/api/agenticpm.openapi.json): the Go types its handler decodes and
// answers.
func Operations() []api.Operation {
	page := api.PageParams(DefaultPageSize, MaxPageSize)
	projects := api.PageParams(DefaultPageSize, MaxPageSize)
	projects[contract.ParamStatus] = api.Param{Enum: api.Strings(ProjectStatuses), Description: "only the projects of this status"}
	escalations := api.PageParams(DefaultPageSize, MaxPageSize)
	escalations[contract.ParamStatus] = api.Param{Enum: api.Strings(EscalationStatuses), Description: "only the escalations of this status"}
	events := api.PageParams(DefaultPageSize, MaxPageSize)
	events[contract.ParamDate] = api.Param{Format: "date", Description: "only the events of this UTC day, YYYY-MM-DD"}
	project := []service.PathParam{contract.ParamID}
	ok := func(body any) []api.Answer { return []api.Answer{{Status: http.StatusOK, Body: body}} }
	return []api.Operation{
		{Route: contract.CreateProject, Summary: "Create a project", Body: createProjectRequest{},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Project{}, Location: true}}},
		{Route: contract.ListProjects, Summary: "Projects", Query: projects, Answers: ok(Page[Project]{})},
		{Route: contract.GetProject, Summary: "A project", UUIDs: project, Answers: ok(Project{})},
		{Route: contract.UpdateProject, Summary: "Change a project", UUIDs: project, Body: updateProjectRequest{}, Answers: ok(Project{})},
		{Route: contract.ListArtefacts, Summary: "A project's artefacts (every type, one page)", UUIDs: project, Answers: ok(Page[Artefact]{})},
		{Route: contract.GetArtefact, Summary: "An artefact, with its version as ETag", UUIDs: project, ETag: true, Answers: ok(Artefact{})},
		{Route: contract.PutArtefact, Summary: "Write an artefact: create (201) or replace the version If-Match names (200)",
			UUIDs: project, Body: putArtefactRequest{}, ETag: true, IfMatch: true,
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Artefact{}, Location: true}, {Status: http.StatusOK, Body: Artefact{}}}},
		{Route: contract.UndoArtefact, Summary: "Restore an artefact's previous version (If-Match: the current one)",
			UUIDs: project, ETag: true, IfMatch: true, Answers: ok(Artefact{})},
		{Route: contract.RecordProjectEvent, Summary: "Record a project's event", UUIDs: project, Body: eventRequest{},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Event{}}}},
		{Route: contract.ListProjectEvents, Summary: "A project's events, newest first", UUIDs: project, Query: page, Answers: ok(Page[Event]{})},
		{Route: contract.RecordGlobalEvent, Summary: "Record an event of no project", Body: eventRequest{},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Event{}}}},
		{Route: contract.ListEvents, Summary: "Events, newest first, or those of one day", Query: events, Answers: ok(Page[Event]{})},
		{Route: contract.CreateEscalation, Summary: "Escalate a decision to a person", UUIDs: project, Body: escalationRequest{},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Escalation{}, Location: true}}},
		{Route: contract.ListProjectEscalations, Summary: "A project's escalations", UUIDs: project, Query: page, Answers: ok(Page[Escalation]{})},
		{Route: contract.GetEscalation, Summary: "An escalation", UUIDs: project, Answers: ok(Escalation{})},
		{Route: contract.Decide, Summary: "Decide a pending escalation", UUIDs: project, Body: decisionRequest{}, Answers: ok(Escalation{})},
		{Route: contract.SupersedeEscalation, Summary: "Replace a pending escalation by a new one", UUIDs: project, Body: escalationRequest{},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Escalation{}, Location: true}}},
		{Route: contract.ListEscalations, Summary: "Escalations of every project", Query: escalations, Answers: ok(Page[Escalation]{})},
		{Route: contract.RecordAction, Summary: "Record an action (held or released by its autonomy level)", UUIDs: project, Body: actionRequest{},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Action{}}}},
		{Route: contract.ListActions, Summary: "A project's actions", UUIDs: project, Query: page, Answers: ok(Page[Action]{})},
		{Route: contract.ReleaseAction, Summary: "Release a held action", UUIDs: project, Answers: ok(Released{})},
		{Route: contract.CancelAction, Summary: "Cancel a held action", UUIDs: project, Answers: ok(Action{})},
		{Route: contract.MarkActionExecuted, Summary: "Mark a released action executed", UUIDs: project, Answers: ok(Action{})},
		{Route: contract.ListHeldActions, Summary: "Held actions of every project", Query: page, Answers: ok(Page[Action]{})},
		{Route: contract.PutCheckpoint, Summary: "Write an integration's checkpoint for a project", UUIDs: project, Body: checkpointRequest{}, Answers: ok(Checkpoint{})},
		{Route: contract.GetCheckpoint, Summary: "An integration's checkpoint for a project", UUIDs: project, Answers: ok(Checkpoint{})},
		{Route: contract.PutIntegration, Summary: "Configure an integration (credentials encrypted, never shown)", Body: integrationRequest{}, Answers: ok(IntegrationConfig{})},
		{Route: contract.GetIntegration, Summary: "An integration's configuration", Answers: ok(IntegrationConfig{})},
		{Route: contract.PutAgentConfig, Summary: "Write an agent configuration value", Body: agentConfigRequest{}, Answers: ok(AgentConfig{})},
		{Route: contract.GetAgentConfig, Summary: "An agent configuration value", Answers: ok(AgentConfig{})},
		{Route: contract.ListAgentConfig, Summary: "Agent configuration values", Query: page, Answers: ok(Page[AgentConfig]{})},
	}
}
