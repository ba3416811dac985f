package nucleus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func startFakeSTS(t testing.TB) (*awsloop.STS, *nucleus.Cloud) {
	t.Helper()
	fake := awsloop.NewSTS()
	fake.VerifySignatures(fake.Secrets)
	require.NoError(t, fake.Start())
	t.Cleanup(func() { _ = fake.Close() })
	cfg := awsloop.Config(executorKey)
	cfg.Retryer = awsloop.NoBackoff
	return fake, nucleus.NewCloudFromConfig(cfg, map[string]string{nucleus.EnvEndpointSTS: fake.URL()})
}

type testResult struct {
	AccountID string         `json:"account_id"`
	Status    string         `json:"status"`
	TestedAt  string         `json:"tested_at"`
	EntryID   string         `json:"entry_id"`
	Details   map[string]any `json:"details"`
}

// POST /accounts/{id}/test assumes the role for real: AssumeRole with the
// account's external id, then GetCallerIdentity signed with the session.
func TestConnectionTest(t *testing.T) {
	fake, cloud := startFakeSTS(t)
	s := newService(t, options{cloud: cloud})
	role := "arn:aws:iam::" + acctA + ":role/nucleus-executor-ok"
	b, _ := json.Marshal(map[string]string{"account_id": acctA, "account_name": "A", "role_arn": role})
	var created struct {
		ExternalID string `json:"external_id"`
	}
	s.MustRoute(t, http.StatusCreated, contract.CreateAccount, string(b), &created)
	ext := created.ExternalID
	fake.Trust(role, ext)                    // the trust policy the account owner writes
	s.createAccount(t, acctB, "B", "active") // its role is not trusted

	var ok testResult
	s.MustRoute(t, http.StatusOK, contract.TestAccount, "", &ok, acctA)
	assert.Equal(t, "SUCCESS", ok.Status, "result %+v", ok)
	assert.Equal(t, "arn:aws:sts::"+acctA+":assumed-role/nucleus-executor-ok/"+nucleus.SessionTest, ok.Details["assumed_role_arn"], "result: assumed_role_arn")
	assert.Equal(t, ok.Details["assumed_role_arn"], ok.Details["caller_arn"], "result: caller_arn")
	assert.Regexp(t, tsPattern, ok.TestedAt, "result: tested_at")
	require.NotEmpty(t, fake.CallsOf("AssumeRole"), "AssumeRole calls")
	ar := fake.CallsOf("AssumeRole")[0]
	assert.Equal(t, role, ar.Get("RoleArn"), "AssumeRole RoleArn")
	assert.Equal(t, ext, ar.Get("ExternalId"), "AssumeRole ExternalId")
	assert.Equal(t, nucleus.SessionTest, ar.Get("RoleSessionName"), "AssumeRole RoleSessionName")
	assert.Equal(t, executorKey, ar.AccessKeyID, "AssumeRole signed by")
	require.NotEmpty(t, fake.CallsOf("GetCallerIdentity"), "GetCallerIdentity calls")
	who := fake.CallsOf("GetCallerIdentity")[0]
	if ss, found := fake.Session(who.AccessKeyID); assert.True(t, found, "GetCallerIdentity signed by %s: no session", who.AccessKeyID) {
		assert.Equal(t, role, ss.RoleARN, "GetCallerIdentity signed by %s: session's role", who.AccessKeyID)
		assert.Equal(t, ss.SessionToken, who.SessionToken, "GetCallerIdentity signed by %s: session token", who.AccessKeyID)
	}
	var a nucleus.Account
	read := s.Do(t, contract.GetAccount.Method, contract.GetAccount.URL(acctA), "")
	read.JSON(t, &a)
	assert.Equal(t, ok.TestedAt, a.LastTestRunAt, "account after test: last_test_run_at")
	assert.Equal(t, nucleus.StatusSuccess, a.LastTestStatus, "account after test: last_test_status")
	assert.True(t, a.ExternalIDSet, "account after test: external id set")
	// Shown once: not in a read, a list, a test's details or the audit log.
	list := s.Do(t, contract.ListAccounts.Method, contract.ListAccounts.URL(), "")
	audit := s.Do(t, contract.EntityLog.Method, contract.EntityLog.URL("account", acctA), "")
	for what, body := range map[string][]byte{"read": read.Body, "list": list.Body, "test": mustJSON(t, ok), "audit": audit.Body} {
		assert.NotContains(t, string(body), ext, "the %s shows the external id", what)
		assert.NotContains(t, string(body), `"external_id":`, "the %s shows the external id", what)
	}

	// A rotation shows the new id once; the old trust policy no longer
	// lets Nucleus in, the new one does; the audit says it changed, not
	// the value.
	var rotated struct {
		ExternalID string `json:"external_id"`
	}
	s.MustRoute(t, http.StatusOK, contract.UpdateAccount, `{"rotate_external_id":true}`, &rotated, acctA)
	require.NotEqual(t, ext, rotated.ExternalID, "rotated external id")
	require.Regexp(t, `^nucleus-`, rotated.ExternalID, "rotated external id")
	var stale testResult
	s.MustRoute(t, http.StatusOK, contract.TestAccount, "", &stale, acctA)
	assert.Equal(t, "FAIL", stale.Status, "test with the old trust policy after a rotation: %+v", stale)
	fake.Trust(role, rotated.ExternalID)
	var fresh testResult
	s.MustRoute(t, http.StatusOK, contract.TestAccount, "", &fresh, acctA)
	assert.Equal(t, "SUCCESS", fresh.Status, "test with the new trust policy: %+v", fresh)
	audit = s.Do(t, contract.EntityLog.Method, contract.EntityLog.URL("account", acctA), "")
	assert.NotContains(t, string(audit.Body), rotated.ExternalID, "audit after rotation")
	assert.Contains(t, string(audit.Body), "rotated, not shown", "audit after rotation")

	var denied testResult
	s.MustRoute(t, http.StatusOK, contract.TestAccount, "", &denied, acctB)
	e, _ := denied.Details["error"].(map[string]any)
	assert.Equal(t, "FAIL", denied.Status, "untrusted role: %+v", denied)
	assert.Equal(t, "AccessDenied", e["code"], "untrusted role: error code")
	assert.Equal(t, "sts:AssumeRole", denied.Details["call"], "untrusted role: call")
	if p := s.audit(t, contract.EntityLog.URL("account", acctB)); assert.Len(t, p.Entries, 2, "audit of B") {
		assert.Equal(t, nucleus.StatusFail, p.Entries[0].Status, "audit of B: status")
		assert.Equal(t, nucleus.ActionExecute, p.Entries[0].Action, "audit of B: action")
	}

	calls := len(fake.Calls())
	apitest.WantError(t, s.Do(t, contract.TestAccount.Method, contract.TestAccount.URL("999999999999"), ""), 404, "not_found", "", "")
	apitest.WantError(t, s.doAs(t, "", contract.TestAccount.Method, contract.TestAccount.URL(acctA), ""), 400, "validation_failed", nucleus.HeaderUserID, "")
	assert.Len(t, fake.Calls(), calls, "refused tests called STS")
	apitest.WantError(t, newService(t, options{}).Do(t, contract.TestAccount.Method, contract.TestAccount.URL(acctA), ""), 503, "unavailable", "", "")

	// STS throttling past the SDK's retries: the test ran, and the
	// throttle is its finding.
	fake.Inject("AssumeRole", -1, awsloop.STSService.Throttle())
	before := len(fake.CallsOf("AssumeRole"))
	var throttled testResult
	s.MustRoute(t, http.StatusOK, contract.TestAccount, "", &throttled, acctA)
	fake.Inject("AssumeRole", 0, nil)
	e, _ = throttled.Details["error"].(map[string]any)
	assert.Equal(t, "FAIL", throttled.Status, "throttled: %+v", throttled)
	assert.Equal(t, "Throttling", e["code"], "throttled: error code")
	assert.Equal(t, "sts:AssumeRole", throttled.Details["call"], "throttled: call")
	assert.Equal(t, 3, len(fake.CallsOf("AssumeRole"))-before, "throttled: AssumeRole attempts, want the SDK's 3")
}

// Concurrent tests whose times run backwards relative to their start (an
// earlier test committing last): last_test_run_at ends at the newest test,
// and every test is in the log.
func TestLastTestRunAtOnlyMovesForward(t *testing.T) {
	fake, cloud := startFakeSTS(t)
	fake.TrustAll()
	var mu sync.Mutex
	next := time.Now().UTC().Add(time.Hour)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		next = next.Add(-time.Second)
		return next
	}
	s := newService(t, options{now: now, cloud: cloud})
	s.createAccount(t, acctA, "A", "active")
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%2 == 0 {
				s.MustRoute(t, http.StatusOK, contract.TestAccount, "", nil, acctA)
				return
			}
			s.MustRoute(t, http.StatusCreated, contract.RecordExecution, `{"entity_type":"account","entity_id":"`+acctA+`","action":"EXECUTE","status":"FAIL"}`, nil)
		})
	}
	wg.Wait()
	p := s.audit(t, contract.EntityLog.URLQuery(svc.Values{svc.Limit: "100"}, "account", acctA))
	var newest string
	tests := 0
	for _, e := range p.Entries {
		if e.Action == nucleus.ActionExecute {
			tests++
			newest = max(newest, e.Timestamp)
		}
	}
	var a nucleus.Account
	s.MustRoute(t, http.StatusOK, contract.GetAccount, "", &a, acctA)
	assert.Equal(t, n, tests, "tests logged")
	assert.Equal(t, newest, a.LastTestRunAt, "last_test_run_at is the newest test")
}

func (s *service) attachTo(t *testing.T, scheduleID, account string, n int) {
	t.Helper()
	s.MustRoute(t, http.StatusCreated, contract.AttachResource, resourceBody(account, ec2ARN(account, n)), nil, scheduleID)
}

func (s *service) resourceCount(t *testing.T, account string) int64 {
	t.Helper()
	var a nucleus.Account
	s.MustRoute(t, http.StatusOK, contract.GetAccount, "", &a, account)
	return a.ResourceCount
}

func TestDeleteSchedule(t *testing.T) {
	s := newService(t, options{})
	s.createAccount(t, acctA, "A", "active")
	s.createAccount(t, acctB, "B", "active")
	sc := s.createSchedule(t, "Doomed")
	keep := s.createSchedule(t, "Kept")
	s.attachTo(t, sc.ScheduleID, acctA, 1)
	s.attachTo(t, sc.ScheduleID, acctA, 2)
	s.attachTo(t, sc.ScheduleID, acctB, 3)
	s.attachTo(t, keep.ScheduleID, acctA, 4)
	a, b := s.resourceCount(t, acctA), s.resourceCount(t, acctB)
	require.Equal(t, int64(3), a, "resource_count A")
	require.Equal(t, int64(1), b, "resource_count B")
	app, audit := s.counts(t)

	apitest.WantError(t, s.doAs(t, "", contract.DeleteSchedule.Method, contract.DeleteSchedule.URL(sc.ScheduleID), ""), 400, "validation_failed", nucleus.HeaderUserID, "")
	apitest.WantError(t, s.Do(t, contract.DeleteSchedule.Method, contract.DeleteSchedule.URL("not-a-uuid"), ""), 404, "not_found", "", "")
	apitest.WantError(t, s.Do(t, contract.DeleteSchedule.Method, contract.DeleteSchedule.URL("3f1d7e3a-1111-4000-8000-000000000000"), ""), 404, "not_found", "", "")
	s.wantCounts(t, app, audit)

	r := s.Do(t, contract.DeleteSchedule.Method, contract.DeleteSchedule.URL(sc.ScheduleID), "")
	require.Equal(t, http.StatusNoContent, r.Status, "delete: %s", r.Body)
	s.wantCounts(t, app-4, audit+1)
	apitest.WantError(t, s.Do(t, contract.GetSchedule.Method, contract.GetSchedule.URL(sc.ScheduleID), ""), 404, "not_found", "", "")
	apitest.WantError(t, s.Do(t, contract.DeleteSchedule.Method, contract.DeleteSchedule.URL(sc.ScheduleID), ""), 404, "not_found", "", "")
	a, b = s.resourceCount(t, acctA), s.resourceCount(t, acctB)
	assert.Equal(t, int64(1), a, "after delete resource_count A")
	assert.Equal(t, int64(0), b, "after delete resource_count B")
	entries := s.audit(t, contract.EntityLog.URL("schedule", sc.ScheduleID)).Entries
	require.NotEmpty(t, entries, "audit of the schedule")
	e := entries[0]
	var d struct {
		Schedule  nucleus.Schedule `json:"schedule"`
		Resources []string         `json:"resources"`
	}
	assert.Equal(t, nucleus.ActionDelete, e.Action, "DELETE entry %+v", e)
	require.NoError(t, json.Unmarshal(e.Details, &d), "DELETE entry %+v", e)
	assert.Equal(t, "Doomed", d.Schedule.ScheduleName, "DELETE entry: schedule")
	assert.Len(t, d.Resources, 3, "DELETE entry: resources")
}

// A delete racing attaches never leaves a resource without its schedule,
// and the accounts' counts match the resources that remain.
func TestDeleteScheduleRacingAttaches(t *testing.T) {
	s := newService(t, options{})
	s.createAccount(t, acctA, "A", "active")
	for round := range 3 {
		sc := s.createSchedule(t, fmt.Sprint("race ", round))
		s.attachTo(t, sc.ScheduleID, acctA, 1000*round)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				r := s.Do(t, contract.AttachResource.Method, contract.AttachResource.URL(sc.ScheduleID), resourceBody(acctA, ec2ARN(acctA, 1000*round+i+1)))
				assert.Contains(t, []int{201, 404, 409}, r.Status, "attach: %s", r.Body)
			})
		}
		wg.Go(func() {
			r := s.Do(t, contract.DeleteSchedule.Method, contract.DeleteSchedule.URL(sc.ScheduleID), "")
			assert.Contains(t, []int{204, 409}, r.Status, "delete: %s", r.Body)
		})
		wg.Wait()
	}
	schedules, resources := map[string]bool{}, 0
	for _, it := range s.items(t, s.tables.App) {
		pk, sk := it["pk"].(string), it["sk"].(string)
		if strings.HasPrefix(pk, "SCHEDULE#") && sk == "METADATA" {
			schedules[pk] = true
		}
	}
	for _, it := range s.items(t, s.tables.App) {
		if sk := it["sk"].(string); strings.HasPrefix(sk, "RESOURCE#") {
			resources++
			assert.True(t, schedules[it["pk"].(string)], "orphan resource %s under %s", sk, it["pk"])
		}
	}
	assert.Equal(t, int64(resources), s.resourceCount(t, acctA), "resource_count")
}

func TestDeleteScheduleTooManyResources(t *testing.T) {
	s := newService(t, options{})
	s.createAccount(t, acctA, "A", "active")
	sc := s.createSchedule(t, "Big")
	for i := range nucleus.MaxDeleteResources + 1 {
		s.attachTo(t, sc.ScheduleID, acctA, i+1)
	}
	app, audit := s.counts(t)
	apitest.WantError(t, s.Do(t, contract.DeleteSchedule.Method, contract.DeleteSchedule.URL(sc.ScheduleID), ""), 409, "conflict", "", "detach")
	s.wantCounts(t, app, audit)
	s.MustRoute(t, http.StatusNoContent, contract.DetachResource, "", nil, sc.ScheduleID, ec2ARN(acctA, 1))
	s.MustRoute(t, http.StatusNoContent, contract.DeleteSchedule, "", nil, sc.ScheduleID)
	s.wantCounts(t, 1, audit+2)
	assert.Equal(t, int64(0), s.resourceCount(t, acctA), "resource_count")
}

func TestDeleteAccount(t *testing.T) {
	s := newService(t, options{})
	s.createAccount(t, acctA, "A", "active")
	sc := s.createSchedule(t, "S")
	s.attachTo(t, sc.ScheduleID, acctA, 1)
	app, audit := s.counts(t)
	apitest.WantError(t, s.Do(t, contract.DeleteAccount.Method, contract.DeleteAccount.URL(acctA), ""), 409, "conflict", "", "detach")
	apitest.WantError(t, s.Do(t, contract.DeleteAccount.Method, contract.DeleteAccount.URL("999999999999"), ""), 404, "not_found", "", "")
	apitest.WantError(t, s.Do(t, contract.DeleteAccount.Method, contract.DeleteAccount.URL("x"), ""), 404, "not_found", "", "")
	apitest.WantError(t, s.doAs(t, "", contract.DeleteAccount.Method, contract.DeleteAccount.URL(acctA), ""), 400, "validation_failed", nucleus.HeaderUserID, "")
	s.wantCounts(t, app, audit)

	s.MustRoute(t, http.StatusNoContent, contract.DetachResource, "", nil, sc.ScheduleID, ec2ARN(acctA, 1))
	s.MustRoute(t, http.StatusNoContent, contract.DeleteAccount, "", nil, acctA)
	apitest.WantError(t, s.Do(t, contract.GetAccount.Method, contract.GetAccount.URL(acctA), ""), 404, "not_found", "", "")
	entries := s.audit(t, contract.EntityLog.URL("account", acctA)).Entries
	require.NotEmpty(t, entries, "audit of the account")
	assert.Equal(t, nucleus.ActionDelete, entries[0].Action, "DELETE entry %+v", entries[0])
	assert.Contains(t, string(entries[0].Details), `"account_name":"A"`, "DELETE entry details")
	// The id can be registered again.
	s.createAccount(t, acctA, "A again", "active")
}

// A resource item from before resource_count (no count on its account) is
// found through GSI1 and still blocks the delete.
func TestDeleteAccountWithUncountedResource(t *testing.T) {
	s := newService(t, options{})
	s.createAccount(t, acctA, "A", "active")
	sc := s.createSchedule(t, "Old")
	av, err := attributevalue.MarshalMap(map[string]string{"pk": "SCHEDULE#" + sc.ScheduleID, "sk": "RESOURCE#" + ec2ARN(acctA, 9),
		"gsi1pk": "ACCOUNT#" + acctA, "gsi1sk": "SCHEDULE#" + sc.ScheduleID, "resource_type": "ec2", "region": "us-east-1", "account_id": acctA})
	require.NoError(t, err)
	_, err = s.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.tables.App), Item: av})
	require.NoError(t, err)
	apitest.WantError(t, s.Do(t, contract.DeleteAccount.Method, contract.DeleteAccount.URL(acctA), ""), 409, "conflict", "", "")
}

// An account delete racing attaches to it: either the attach lands first
// and the delete is refused, or the delete lands and the attach finds no
// account. Never a resource of a deleted account.
func TestDeleteAccountRacingAttach(t *testing.T) {
	s := newService(t, options{})
	sc := s.createSchedule(t, "S")
	for round := range 5 {
		acct := fmt.Sprintf("%012d", 300000000000+round)
		s.createAccount(t, acct, "R", "active")
		var wg sync.WaitGroup
		var attached, deleted bool
		wg.Go(func() {
			attached = s.Do(t, contract.AttachResource.Method, contract.AttachResource.URL(sc.ScheduleID), resourceBody(acct, ec2ARN(acct, 1))).Status == 201
		})
		wg.Go(func() {
			deleted = s.Do(t, contract.DeleteAccount.Method, contract.DeleteAccount.URL(acct), "").Status == 204
		})
		wg.Wait()
		assert.NotEqual(t, attached, deleted, "round %d: attached %v, deleted %v: want exactly one", round, attached, deleted)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
