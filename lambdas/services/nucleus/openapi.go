package nucleus

import (
	"net/http"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// Operations describes each route of the contract for its OpenAPI document
// (docs/api/nucleus.openapi.json): the Go types its handler decodes and
// answers.
func Operations() []api.Operation {
	page := api.PageParams(DefaultPageSize, MaxPageSize)
	audit := api.PageParams(DefaultPageSize, MaxPageSize)
	audit[contract.ParamSince] = api.Param{Format: "date-time", Description: "entries at or after this RFC 3339 time"}
	audit[contract.ParamUntil] = api.Param{Format: "date-time", Description: "entries before this RFC 3339 time, after since"}
	accounts := api.PageParams(DefaultPageSize, MaxPageSize)
	accounts[contract.ParamStatus] = api.Param{Enum: api.Strings(AccountStatuses), Description: "only the accounts of this status"}
	schedule := []service.PathParam{contract.ParamID}
	ops := []api.Operation{
		{Route: contract.CreateAccount, Summary: "Register an AWS account (its external id is shown once, here)",
			Body: createAccountRequest{}, Secrets: []string{"external_id"},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: CreatedAccount{}, Location: true}}},
		{Route: contract.ListAccounts, Summary: "Accounts, by name", Query: accounts,
			Answers: []api.Answer{{Status: http.StatusOK, Body: AccountPage{}}}},
		{Route: contract.GetAccount, Summary: "An account",
			Answers: []api.Answer{{Status: http.StatusOK, Body: Account{}}}},
		{Route: contract.UpdateAccount, Summary: "Change an account (rotate_external_id shows the new id once)",
			Body:    updateAccountRequest{},
			Answers: []api.Answer{{Status: http.StatusOK, Body: CreatedAccount{}}},
			Secrets: []string{"external_id"}},
		{Route: contract.DeleteAccount, Summary: "Delete an account",
			Answers: []api.Answer{{Status: http.StatusNoContent}}},
		{Route: contract.AccountResources, Summary: "The resources of an account's schedules", Query: page,
			Answers: []api.Answer{{Status: http.StatusOK, Body: ResourcePage{}}}},
		{Route: contract.TestAccount, Summary: "Test the connection: assume the account's role",
			Answers: []api.Answer{{Status: http.StatusOK, Body: TestResult{}}}},
		{Route: contract.CreateSchedule, Summary: "Create a schedule", Body: createScheduleRequest{},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Schedule{}, Location: true}}},
		{Route: contract.ListSchedules, Summary: "Schedules", Query: page,
			Answers: []api.Answer{{Status: http.StatusOK, Body: SchedulePage{}}}},
		{Route: contract.GetSchedule, Summary: "A schedule with a page of its resources", Query: page, UUIDs: schedule,
			Answers: []api.Answer{{Status: http.StatusOK, Body: ScheduleDetail{}}}},
		{Route: contract.UpdateSchedule, Summary: "Change a schedule", Body: updateScheduleRequest{}, UUIDs: schedule,
			Answers: []api.Answer{{Status: http.StatusOK, Body: Schedule{}}}},
		{Route: contract.DeleteSchedule, Summary: "Delete a schedule", UUIDs: schedule,
			Answers: []api.Answer{{Status: http.StatusNoContent}}},
		{Route: contract.AttachResource, Summary: "Attach a resource to a schedule (201 new, 200 already attached)",
			Body: attachResourceRequest{}, UUIDs: schedule,
			Answers: []api.Answer{{Status: http.StatusCreated, Body: Resource{}}, {Status: http.StatusOK, Body: Resource{}}}},
		{Route: contract.DetachResource, Summary: "Detach a resource (its ARN URL-escaped or with its slashes)", UUIDs: schedule,
			Answers: []api.Answer{{Status: http.StatusNoContent}}},
		{Route: contract.RecordExecution, Summary: "Record an execution in the audit log", Body: executionRequest{},
			Answers: []api.Answer{{Status: http.StatusCreated, Body: AuditEntry{}}}},
		{Route: contract.Timeline, Summary: "The audit log, newest first", Query: audit,
			Answers: []api.Answer{{Status: http.StatusOK, Body: AuditPage{}}}},
		{Route: contract.GlobalLog, Summary: "The global entries of the audit log", Query: audit,
			Answers: []api.Answer{{Status: http.StatusOK, Body: AuditPage{}}}},
		{Route: contract.EntityLog, Summary: "An account's or a schedule's audit log", Query: audit,
			Answers: []api.Answer{{Status: http.StatusOK, Body: AuditPage{}}}},
	}
	// Every change is audited with its user: the caller's IAM ARN in AWS,
	// X-User-Id where there is none (make dev, tests).
	for i, op := range ops {
		if op.Route.Method != http.MethodGet {
			ops[i].Headers = map[string]string{HeaderUserID: "the user making the change, recorded in the audit log; required unless the request is IAM-signed (the caller's ARN is the user then)"}
		}
	}
	return ops
}
