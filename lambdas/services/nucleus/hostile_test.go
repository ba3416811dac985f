package nucleus_test

import (
	"testing"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
)

// TestHostileInput: every hostile input of apitest.Hostile is a 4xx that
// stores nothing in either table, on every route; an execution's details
// are the free-form document.
func TestHostileInput(t *testing.T) {
	s := newService(t, options{})
	acct := s.createAccount(t, "111111111111", "one", "active")
	sc := s.createSchedule(t, "office hours")
	s.Hostile(t, s.H,
		apitest.Write{Method: contract.CreateAccount.Method, Path: contract.CreateAccount.URL(), Body: `{"account_id":"222222222222","account_name":"two","role_arn":"` + roleARN("222222222222") + `","status":"active"}`},
		apitest.Write{Method: contract.UpdateAccount.Method, Path: contract.UpdateAccount.URL(acct.AccountID), Body: `{"account_name":"Alpha"}`},
		apitest.Write{Method: contract.CreateSchedule.Method, Path: contract.CreateSchedule.URL(), Body: `{"schedule_name":"n","start_cron":"0 8 * * MON-FRI","end_cron":"0 18 * * MON-FRI","timezone":"Europe/Berlin","enabled":true}`},
		apitest.Write{Method: contract.UpdateSchedule.Method, Path: contract.UpdateSchedule.URL(sc.ScheduleID), Body: `{"schedule_name":"renamed"}`},
		apitest.Write{Method: contract.AttachResource.Method, Path: contract.AttachResource.URL(sc.ScheduleID), Body: resourceBody(acct.AccountID, ec2ARN(acct.AccountID, 1))},
		apitest.Write{Method: contract.RecordExecution.Method, Path: contract.RecordExecution.URL(), Body: `{"entity_type":"schedule","entity_id":"` + sc.ScheduleID + `","action":"EXECUTE","status":"SUCCESS","details":{"operation":"stop"}}`, Doc: "details"},
	)
}
