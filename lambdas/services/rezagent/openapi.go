package rezagent

import (
	"encoding/json"
	"net/http"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// Operations describes each route of the contract for its OpenAPI document
// (docs/api/rezagent.openapi.json): the Go types its handler decodes and
// answers.
func Operations() []api.Operation {
	list := api.PageParams(DefaultPageSize, MaxPageSize)
	list[contract.ParamStage] = api.Param{Enum: Stages, Description: "must be the deployment's own stage (each stage is a separate deployment)"}
	list[contract.ParamStatus] = api.Param{Enum: api.Strings(Statuses), Description: "only the messages of this status (not with message_type)"}
	list[contract.ParamMessageType] = api.Param{Description: "only the messages of this type (not with status)"}
	list[contract.ParamFrom] = api.Param{Description: "created at or after: an RFC 3339 time (2025-10-21T14:30:00Z) or a date (2025-10-21)"}
	list[contract.ParamTo] = api.Param{Description: "created before: an RFC 3339 time or a date, after from"}
	metrics := map[service.QueryParam]api.Param{
		contract.ParamSince:       {Description: "start of the window counted: an RFC 3339 time or a date, not in the future (default: 24 hours ago)"},
		contract.ParamMessageType: {Description: "count only this message type"},
	}
	id := []service.PathParam{contract.ParamID}
	return []api.Operation{
		{Route: contract.CreateMessage, Summary: "Create a message (queued for processing)",
			Body:    createRequest{},
			Example: createRequest{MessageType: "hello_world", CreatedBy: "web", Payload: json.RawMessage(`{"text":"hi"}`)},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Message{}, Location: true}}},
		{Route: contract.ListMessages, Summary: "Messages, newest first", Query: list,
			Answers: []api.Answer{{Status: http.StatusOK, Body: Page{}}}},
		{Route: contract.GetMessage, Summary: "A message", UUIDs: id,
			Answers: []api.Answer{{Status: http.StatusOK, Body: Message{}}}},
		{Route: contract.SetStatus, Summary: "Move a message to another status", UUIDs: id, Body: statusRequest{},
			Answers: []api.Answer{{Status: http.StatusOK, Body: Message{}}}},
		{Route: contract.Metrics, Summary: "Message counts since a time", Query: metrics,
			Answers: []api.Answer{{Status: http.StatusOK, Body: Metrics{}}}},
	}
}
