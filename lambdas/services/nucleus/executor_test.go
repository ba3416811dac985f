package nucleus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	svc "github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/dynastack/dynastack/lambdas/services/nucleus/executor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// execEnv is the API and the executor on the same fresh tables, with the
// executor's SDK clients pointed at strict loopback fakes of STS, EC2, RDS
// and ECS, and a clock the test moves.
type execEnv struct {
	*service
	x   *nucleus.Executor
	cfg nucleus.ExecutorConfig
	sts *awsloop.STS
	ec2 *awsloop.EC2
	rds *awsloop.RDS
	ecs *awsloop.ECS

	mu    sync.Mutex
	clock time.Time
}

const executorKey = "AKIDEXECUTOR"

func newExecEnv(t testing.TB) *execEnv {
	t.Helper()
	e := &execEnv{sts: awsloop.NewSTS(), ec2: awsloop.NewEC2(), rds: awsloop.NewRDS(), ecs: awsloop.NewECS(), clock: time.Now().UTC()}
	// The API and the executor share the clock: schedules are created
	// and edited at the times the test says.
	e.service = newService(t, options{now: e.now})
	for _, s := range []*awsloop.Server{e.sts.Server, e.ec2.Server, e.rds.Server, e.ecs.Server} {
		// Every call's signature is checked with the secret of its key:
		// a session's calls prove they hold the session's secret.
		s.VerifySignatures(e.sts.Secrets)
		require.NoError(t, s.Start())
		t.Cleanup(func() { _ = s.Close() })
	}
	cloud := nucleus.NewCloudFromConfig(awsloop.Config(executorKey), map[string]string{
		nucleus.EnvEndpointSTS: e.sts.URL(), nucleus.EnvEndpointEC2: e.ec2.URL(),
		nucleus.EnvEndpointRDS: e.rds.URL(), nucleus.EnvEndpointECS: e.ecs.URL(),
	})
	// The executor's client is recorded as its function's (testenv.Main).
	cfg := nucleus.ExecutorConfig{Tables: e.tables, Client: testenv.ServiceClient(t, "nucleus-executor"), Cloud: cloud, Act: executor.Act, Now: e.now}
	if !testing.Verbose() {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	x, err := nucleus.NewExecutorFromConfig(cfg)
	require.NoError(t, err)
	e.x, e.cfg = x, cfg
	return e
}

func (e *execEnv) now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clock
}

func (e *execEnv) setClock(at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clock = at
}

// run is one invocation for scheduled time at, with the clock at at.
func (e *execEnv) run(t *testing.T, at time.Time) {
	t.Helper()
	e.setClock(at)
	require.NoError(t, e.x.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: at}), "Run(%s)", at.Format(time.RFC3339))
}

// accountWithRole registers an account whose role the fake STS trusts
// with the external id Nucleus generated (the create's answer shows it):
// the trust policy an account owner writes.
func (e *execEnv) accountWithRole(t testing.TB, id string) (role, externalID string) {
	t.Helper()
	role = "arn:aws:iam::" + id + ":role/nucleus-executor-target"
	b, _ := json.Marshal(map[string]string{"account_id": id, "account_name": "acct " + id, "role_arn": role})
	var created struct {
		ExternalID string `json:"external_id"`
	}
	e.MustRoute(t, http.StatusCreated, contract.CreateAccount, string(b), &created)
	require.Regexp(t, `^nucleus-`, created.ExternalID, "external id: want a generated one")
	e.sts.Trust(role, created.ExternalID)
	return role, created.ExternalID
}

// scheduleAt creates a schedule in zone whose start_cron fires at the
// wall times of starts and end_cron at those of stops (minute precision).
func (e *execEnv) scheduleAt(t testing.TB, zone string, starts, stops []time.Time) string {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	require.NoError(t, err)
	cron := func(ts []time.Time) string {
		mins, hours := map[int]bool{}, map[int]bool{}
		for _, x := range ts {
			x = x.In(loc)
			mins[x.Minute()], hours[x.Hour()] = true, true
		}
		return join(mins) + " " + join(hours) + " * * *"
	}
	b, _ := json.Marshal(map[string]any{"schedule_name": "exec " + zone, "start_cron": cron(starts), "end_cron": cron(stops),
		"timezone": zone, "enabled": true})
	var sc nucleus.Schedule
	e.MustRoute(t, http.StatusCreated, contract.CreateSchedule, string(b), &sc)
	return sc.ScheduleID
}

func join(set map[int]bool) string {
	var xs []int
	for x := range set {
		xs = append(xs, x)
	}
	sort.Ints(xs)
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(x)
	}
	return s
}

func (e *execEnv) attach(t testing.TB, scheduleID, typ, region, account, arn string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"resource_arn": arn, "resource_type": typ, "region": region, "account_id": account})
	e.MustRoute(t, http.StatusCreated, contract.AttachResource, string(b), nil, scheduleID)
}

// executions returns the schedule's EXECUTE entries by resource ARN.
func (e *execEnv) executions(t *testing.T, scheduleID string) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, en := range e.audit(t, contract.EntityLog.URLQuery(svc.Values{svc.Limit: "100"}, "schedule", scheduleID)).Entries {
		if en.Action != nucleus.ActionExecute {
			continue
		}
		var d map[string]any
		require.NoError(t, json.Unmarshal(en.Details, &d))
		d["status"] = string(en.Status)
		d["user_id"] = en.UserID
		out[d["resource_arn"].(string)] = append(out[d["resource_arn"].(string)], d)
	}
	return out
}

// signedBy checks that call was signed with credentials the fake STS
// issued for role to the executor.
func (e *execEnv) signedBy(t *testing.T, c awsloop.Call, role string) {
	t.Helper()
	ss, ok := e.sts.Session(c.AccessKeyID)
	if !assert.True(t, ok, "%s %s signed by %q: not a session the fake STS issued", c.Service, c.Action, c.AccessKeyID) {
		return
	}
	assert.Equal(t, role, ss.RoleARN, "%s %s signed by %q: session's role", c.Service, c.Action, c.AccessKeyID)
	assert.Equal(t, ss.SessionToken, c.SessionToken, "%s %s signed by %q: session token", c.Service, c.Action, c.AccessKeyID)
	assert.Equal(t, executorKey, ss.CallerAccessKeyID, "%s %s signed by %q: session issued to", c.Service, c.Action, c.AccessKeyID)
}

const (
	acctA = "111111111111"
	acctB = "222222222222"
)

var (
	instanceA  = "arn:aws:ec2:us-east-1:" + acctA + ":instance/i-0000000000000000a"
	instanceX  = "arn:aws:ec2:us-east-1:" + acctA + ":instance/i-0000000000000009f" // unknown to EC2
	databaseA  = "arn:aws:rds:eu-west-1:" + acctA + ":db:orders"
	clusterB   = "arn:aws:rds:us-west-2:" + acctB + ":cluster:reports"
	serviceB   = "arn:aws:ecs:us-west-2:" + acctB + ":service/prod/web"
	legacySvcB = "arn:aws:ecs:us-west-2:" + acctB + ":service/worker"
)

// One schedule over two accounts and every resource kind: each due action
// assumes each account's role once (with its external id), calls each
// resource's API with those credentials as the API reference documents
// the call, and records one EXECUTE entry per resource; a failing resource
// is a FAIL entry and the others go on. A second run for the same fire
// does nothing. ECS goes to 0 and back to the count it had.
func TestExecutorStartsAndStopsEveryResource(t *testing.T) {
	e := newExecEnv(t)
	roleA, extA := e.accountWithRole(t, acctA)
	roleB, extB := e.accountWithRole(t, acctB)
	e.ec2.AddInstance("i-0000000000000000a", awsloop.InstanceStopped)
	e.rds.AddInstance("orders", awsloop.DBStopped)
	e.rds.AddCluster("reports", awsloop.DBStopped)
	e.ecs.AddService("prod", "web", 3)
	e.ecs.AddService("default", "worker", 2)

	base := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	start1, stop, start2 := base, base.Add(time.Minute), base.Add(2*time.Minute)
	sid := e.scheduleAt(t, "Asia/Kolkata", []time.Time{start1, start2}, []time.Time{stop})
	for _, r := range [][4]string{
		{"ec2", "us-east-1", acctA, instanceA}, {"ec2", "us-east-1", acctA, instanceX}, {"rds", "eu-west-1", acctA, databaseA},
		{"rds", "us-west-2", acctB, clusterB}, {"ecs", "us-west-2", acctB, serviceB}, {"ecs", "us-west-2", acctB, legacySvcB},
	} {
		e.attach(t, sid, r[0], r[1], r[2], r[3])
	}

	// Nothing is due before the first fire.
	e.run(t, start1.Add(-time.Second))
	require.Empty(t, e.sts.Calls(), "STS calls before the first fire")

	e.run(t, start1.Add(30*time.Second))
	assumes := e.sts.CallsOf("AssumeRole")
	require.Len(t, assumes, 2, "AssumeRole calls: want one per account")
	for _, c := range assumes {
		want := map[string]string{"RoleArn": roleA, "ExternalId": extA}
		if c.Get("RoleArn") == roleB {
			want = map[string]string{"RoleArn": roleB, "ExternalId": extB}
		}
		assert.Equal(t, want["RoleArn"], c.Get("RoleArn"), "AssumeRole %v: RoleArn", c.Params)
		assert.Equal(t, want["ExternalId"], c.Get("ExternalId"), "AssumeRole %v: ExternalId", c.Params)
		assert.Equal(t, want["ExternalId"] != "", c.Params.Has("ExternalId"), "AssumeRole %v: ExternalId sent", c.Params)
		assert.Equal(t, contract.ExecutorName, c.Get("RoleSessionName"), "AssumeRole %v: RoleSessionName", c.Params)
		assert.Equal(t, executorKey, c.AccessKeyID, "AssumeRole %v: signed by", c.Params)
	}
	starts := e.ec2.CallsOf("StartInstances")
	require.Len(t, starts, 2, "StartInstances calls: want one per instance")
	for _, c := range starts {
		assert.Len(t, c.List("InstanceId"), 1, "StartInstances %v: instance ids", c.Params)
		assert.Equal(t, "us-east-1", c.Region, "StartInstances %v: region", c.Params)
		assert.False(t, c.Params.Has("InstanceIds.1"), "StartInstances %v: parameter name", c.Params)
		e.signedBy(t, c, roleA)
	}
	if c := e.rds.CallsOf("StartDBInstance"); assert.Len(t, c, 1, "StartDBInstance calls") {
		assert.Equal(t, "orders", c[0].Get("DBInstanceIdentifier"), "StartDBInstance %+v", c[0])
		assert.Equal(t, "eu-west-1", c[0].Region, "StartDBInstance %+v", c[0])
		e.signedBy(t, c[0], roleA)
	}
	if c := e.rds.CallsOf("StartDBCluster"); assert.Len(t, c, 1, "StartDBCluster calls") {
		assert.Equal(t, "reports", c[0].Get("DBClusterIdentifier"), "StartDBCluster %+v", c[0])
		assert.Equal(t, "us-west-2", c[0].Region, "StartDBCluster %+v", c[0])
		e.signedBy(t, c[0], roleB)
	}
	// No count recorded yet and the services run: left alone.
	assert.Empty(t, e.ecs.CallsOf("UpdateService"), "UpdateService before any stop")
	for _, c := range e.ecs.CallsOf("DescribeServices") {
		e.signedBy(t, c, roleB)
	}

	ex := e.executions(t, sid)
	require.Len(t, ex, 6, "resources with EXECUTE entries: %v", ex)
	for arn, entries := range ex {
		d := entries[0]
		want := "SUCCESS"
		if arn == instanceX {
			want = "FAIL"
			errD, _ := d["error"].(map[string]any)
			assert.Equal(t, "InvalidInstanceID.NotFound", errD["code"], "failing resource details %v", d)
		}
		assert.Len(t, entries, 1, "%s: want one %s start entry", arn, want)
		assert.Equal(t, want, d["status"], "%s: status", arn)
		assert.Equal(t, "start", d["operation"], "%s: operation", arn)
		assert.Equal(t, start1.Format(time.RFC3339), d["fire_time"], "%s: fire_time", arn)
		assert.Equal(t, contract.ExecutorName, d["user_id"], "%s: user", arn)
	}
	assert.Equal(t, "stopped", ex[instanceA][0]["previous_state"], "EC2 details %v", ex[instanceA][0])
	assert.Equal(t, "pending", ex[instanceA][0]["current_state"], "EC2 details %v", ex[instanceA][0])
	assert.Equal(t, "ec2:StartInstances", ex[instanceA][0]["call"], "EC2 details %v", ex[instanceA][0])
	assert.Equal(t, awsloop.InstanceRunning, e.ec2.State("i-0000000000000000a"), "instance not started")
	assert.Equal(t, awsloop.DBAvailable, e.rds.InstanceStatus("orders"), "database not started")
	assert.Equal(t, awsloop.DBAvailable, e.rds.ClusterStatus("reports"), "cluster not started")

	// Again for the same fire time, and a later run inside the look-back:
	// the marker makes both skip it.
	calls := len(e.ec2.Calls()) + len(e.rds.Calls()) + len(e.ecs.Calls()) + len(e.sts.Calls())
	e.run(t, start1.Add(30*time.Second))
	e.run(t, start1.Add(50*time.Second))
	assert.Equal(t, calls, len(e.ec2.Calls())+len(e.rds.Calls())+len(e.ecs.Calls())+len(e.sts.Calls()), "AWS calls by repeated runs")
	assert.Equal(t, 6, countEntries(e.executions(t, sid)), "EXECUTE entries after repeated runs")

	// Stop: ECS services read, scaled to 0, counts kept on the items.
	e.run(t, stop.Add(20*time.Second))
	n, _ := e.ecs.DesiredCount("prod", "web")
	assert.Equal(t, int32(0), n, "web desired count after stop")
	var upd struct {
		Cluster, Service string
		DesiredCount     *int32
	}
	updates := e.ecs.CallsOf("UpdateService")
	require.Len(t, updates, 2, "UpdateService calls on stop")
	for _, c := range updates {
		if assert.NoError(t, c.Decode(&upd), "UpdateService %s", c.Body) && assert.NotNil(t, upd.DesiredCount, "UpdateService %s", c.Body) {
			assert.Equal(t, int32(0), *upd.DesiredCount, "UpdateService %s", c.Body)
		}
		assert.Contains(t, [][2]string{{"prod", "web"}, {"default", "worker"}}, [2]string{upd.Cluster, upd.Service}, "UpdateService %s", c.Body)
		e.signedBy(t, c, roleB)
	}
	assert.Len(t, e.ec2.CallsOf("StopInstances"), 2, "StopInstances")
	if c := e.rds.CallsOf("StopDBCluster"); assert.Len(t, c, 1, "StopDBCluster") {
		assert.Equal(t, "reports", c[0].Get("DBClusterIdentifier"), "StopDBCluster %+v", c[0])
	}
	var detail struct {
		Resources []nucleus.Resource `json:"resources"`
	}
	e.MustRoute(t, http.StatusOK, contract.GetSchedule, "", &detail, sid)
	for _, r := range detail.Resources {
		want := map[string]int32{serviceB: 3, legacySvcB: 2}[r.ResourceARN]
		if got := r.PreviousDesiredCount; want == 0 {
			assert.Nil(t, got, "%s previous_desired_count", r.ResourceARN)
		} else if assert.NotNil(t, got, "%s previous_desired_count", r.ResourceARN) {
			assert.Equal(t, want, *got, "%s previous_desired_count", r.ResourceARN)
		}
	}

	// Start again: the counts come back.
	e.ecs.Reset()
	e.run(t, start2.Add(10*time.Second))
	n, _ = e.ecs.DesiredCount("prod", "web")
	assert.Equal(t, int32(3), n, "web desired count after start")
	n, _ = e.ecs.DesiredCount("default", "worker")
	assert.Equal(t, int32(2), n, "worker desired count after start")
	assert.Empty(t, e.ecs.CallsOf("DescribeServices"), "start with recorded counts described services")
	assert.Equal(t, 18, countEntries(e.executions(t, sid)), "EXECUTE entries after start, stop, start")
}

func countEntries(m map[string][]map[string]any) int {
	n := 0
	for _, es := range m {
		n += len(es)
	}
	return n
}

// Twenty runs for the same fire at once (an overlap of invocations, or a
// retry racing the original) act on each resource once and write one
// entry each.
func TestExecutorOverlappingRunsExecuteOnce(t *testing.T) {
	e := newExecEnv(t)
	role, _ := e.accountWithRole(t, acctA)
	const n = 8
	fire := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	sid := e.scheduleAt(t, "UTC", []time.Time{fire}, []time.Time{fire.Add(time.Hour)})
	for i := range n {
		id := fmt.Sprintf("i-%017x", i+1)
		e.ec2.AddInstance(id, awsloop.InstanceStopped)
		e.attach(t, sid, "ec2", "us-east-1", acctA, "arn:aws:ec2:us-east-1:"+acctA+":instance/"+id)
	}
	at := fire.Add(time.Minute)
	e.setClock(at)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() { errs <- e.x.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: at}) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	per := map[string]int{}
	for _, c := range e.ec2.CallsOf("StartInstances") {
		per[c.List("InstanceId")[0]]++
		e.signedBy(t, c, role)
	}
	assert.Len(t, per, n, "instances started")
	for id, k := range per {
		assert.Equal(t, 1, k, "%s: times started", id)
	}
	ex := e.executions(t, sid)
	assert.Len(t, ex, n, "resources with entries")
	assert.Equal(t, n, countEntries(ex), "entries: want one each")
}

// A run that died mid-execution leaves its claim running and some
// resource actions recorded. After the lease a later run takes over and
// acts on the rest only.
func TestExecutorTakesOverAnExpiredClaim(t *testing.T) {
	e := newExecEnv(t)
	e.accountWithRole(t, acctA)
	fire := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	sid := e.scheduleAt(t, "UTC", []time.Time{fire}, []time.Time{fire.Add(time.Hour)})
	arns := []string{}
	for i := range 3 {
		id := fmt.Sprintf("i-%017x", i+1)
		e.ec2.AddInstance(id, awsloop.InstanceStopped)
		arn := "arn:aws:ec2:us-east-1:" + acctA + ":instance/" + id
		arns = append(arns, arn)
		e.attach(t, sid, "ec2", "us-east-1", acctA, arn)
	}
	pk := "EXECUTION#" + sid + "#start#" + fire.Format(time.RFC3339)
	put := func(item map[string]any) {
		av, err := attributevalue.MarshalMap(item)
		require.NoError(t, err)
		_, err = e.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.tables.Audit), Item: av})
		require.NoError(t, err)
	}
	// The dead run: claimed at fire+10s, recorded the first resource.
	put(map[string]any{"pk": pk, "sk": "CLAIM", "state": "running", "owner": "dead-run",
		"lease_until": fire.Add(10*time.Second + nucleus.ClaimLease).Unix(), "expire_at": fire.Add(nucleus.MarkerRetention).Unix()})
	put(map[string]any{"pk": pk, "sk": "RESOURCE#" + arns[0], "status": "SUCCESS", "expire_at": fire.Add(nucleus.MarkerRetention).Unix()})

	// Within the lease: hands off.
	e.run(t, fire.Add(5*time.Minute))
	require.Empty(t, e.ec2.Calls(), "EC2 calls while the claim is leased")
	// After it: the rest, once.
	e.run(t, fire.Add(20*time.Minute))
	started := map[string]bool{}
	for _, c := range e.ec2.CallsOf("StartInstances") {
		started[c.List("InstanceId")[0]] = true
	}
	assert.Equal(t, map[string]bool{"i-00000000000000002": true, "i-00000000000000003": true}, started, "started: want the two unrecorded instances")
	e.run(t, fire.Add(25*time.Minute))
	assert.Len(t, e.ec2.Calls(), 2, "EC2 calls after the takeover finished")
}

// A run still acting when the schedule's next action fires (a slow run,
// the next cron a minute later) leaves the resources it has not reached to
// that action's run: it must not start what the stop's run has just
// stopped. The resource whose call was in flight is the one left behind.
func TestExecutorSlowRunYieldsToTheNextAction(t *testing.T) {
	e := newExecEnv(t)
	e.accountWithRole(t, acctA)
	fire := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	sid := e.scheduleAt(t, "UTC", []time.Time{fire}, []time.Time{fire.Add(time.Minute)})
	var ids []string
	for i := range 3 {
		id := fmt.Sprintf("i-%017x", i+1)
		ids = append(ids, id)
		e.ec2.AddInstance(id, awsloop.InstanceStopped)
		e.attach(t, sid, "ec2", "us-east-1", acctA, "arn:aws:ec2:us-east-1:"+acctA+":instance/"+id)
	}
	// The start's run: its first action waits until the stop has run.
	entered, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cfg := e.cfg
	cfg.Act = func(ctx context.Context, a nucleus.ResourceAction) nucleus.Outcome {
		once.Do(func() { close(entered); <-proceed })
		return executor.Act(ctx, a)
	}
	slow, err := nucleus.NewExecutorFromConfig(cfg)
	require.NoError(t, err)
	e.setClock(fire)
	done := make(chan error, 1)
	go func() { done <- slow.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: fire}) }()
	select {
	case <-entered:
	case err := <-done:
		require.FailNow(t, "the start's run ended before acting", "error: %v", err)
	}

	// The stop fires; its own run stops every resource.
	e.run(t, fire.Add(time.Minute))
	require.Len(t, e.ec2.CallsOf("StopInstances"), 3, "StopInstances of the stop's run")

	close(proceed)
	require.NoError(t, <-done)
	var started []string
	for _, c := range e.ec2.CallsOf("StartInstances") {
		started = append(started, c.List("InstanceId")...)
	}
	assert.Equal(t, []string{ids[0]}, started, "StartInstances after the stop: want only the call already in flight")
	for _, id := range ids[1:] {
		assert.Equal(t, awsloop.InstanceStopped, e.ec2.State(id), "%s: the stop is the schedule's latest action", id)
	}
}

// What a run does not act on: disabled schedules, fires from before the
// schedule's last change of timing (a rename is none), fires older than
// the look-back, fires a later fire supersedes, and every schedule across
// several index pages.
func TestExecutorWhatIsDue(t *testing.T) {
	e := newExecEnv(t)
	e.x.SetPageLimit(2)
	e.accountWithRole(t, acctA)
	fire := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	var ids []string
	for i := range 5 {
		id := fmt.Sprintf("i-%017x", i+1)
		e.ec2.AddInstance(id, awsloop.InstanceStopped)
		sid := e.scheduleAt(t, "UTC", []time.Time{fire}, []time.Time{fire.Add(2 * time.Minute)})
		e.attach(t, sid, "ec2", "us-east-1", acctA, "arn:aws:ec2:us-east-1:"+acctA+":instance/"+id)
		ids = append(ids, sid)
	}
	// Disabled: never.
	e.MustRoute(t, http.StatusOK, contract.UpdateSchedule, `{"enabled":false}`, nil, ids[4])

	// Past the look-back: neither fire is executed.
	e.run(t, fire.Add(2*time.Minute+nucleus.DefaultLookBack+time.Second))
	require.Empty(t, e.ec2.Calls(), "EC2 calls for fires older than the look-back")
	// A retry for the fire, delivered after the stop fired: superseded.
	e.setClock(fire.Add(3 * time.Minute))
	require.NoError(t, e.x.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: fire.Add(30 * time.Second)}))
	require.Empty(t, e.ec2.CallsOf("StartInstances"), "starts although the stop superseded them")
	// A schedule re-timed after the stop fired does not replay it; one
	// renamed then still gets its stop (its timing did not change).
	e.setClock(fire.Add(2*time.Minute + 10*time.Second))
	e.MustRoute(t, http.StatusOK, contract.UpdateSchedule, `{"timezone":"Etc/UTC"}`, nil, ids[0])
	e.MustRoute(t, http.StatusOK, contract.UpdateSchedule, `{"schedule_name":"renamed"}`, nil, ids[1])
	// The stop's own run: the three other enabled schedules, across pages.
	e.run(t, fire.Add(2*time.Minute+20*time.Second))
	assert.Len(t, e.ec2.CallsOf("StopInstances"), 3, "StopInstances: want one per enabled schedule whose timing did not change")
	for i, sid := range ids {
		want := 1
		if i == 0 || i == 4 {
			want = 0
		}
		assert.Equal(t, want, countEntries(e.executions(t, sid)), "schedule %d: entries", i)
	}
}

// Accounts the executor cannot act in: an inactive one is not called at
// all, one whose role STS refuses fails at AssumeRole; each resource gets
// its FAIL entry and the healthy account's resource still starts.
func TestExecutorAccountFailures(t *testing.T) {
	e := newExecEnv(t)
	e.accountWithRole(t, acctA)
	e.createAccount(t, acctB, "untrusted", "active") // role not trusted by the fake STS
	const acctC = "333333333333"
	e.accountWithRole(t, acctC)
	e.MustRoute(t, http.StatusOK, contract.UpdateAccount, `{"status":"inactive"}`, nil, acctC)
	fire := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	sid := e.scheduleAt(t, "UTC", []time.Time{fire}, []time.Time{fire.Add(time.Hour)})
	arns := map[string]string{}
	for i, acct := range []string{acctA, acctB, acctC} {
		id := fmt.Sprintf("i-%017x", i+1)
		e.ec2.AddInstance(id, awsloop.InstanceStopped)
		arns[acct] = "arn:aws:ec2:us-east-1:" + acct + ":instance/" + id
		e.attach(t, sid, "ec2", "us-east-1", acct, arns[acct])
	}
	e.run(t, fire.Add(time.Minute))
	if c := e.ec2.CallsOf("StartInstances"); assert.Len(t, c, 1, "StartInstances calls: want only account A's") {
		assert.Equal(t, "i-00000000000000001", c[0].List("InstanceId")[0], "StartInstances: want only account A's")
	}
	assert.Len(t, e.sts.CallsOf("AssumeRole"), 2, "AssumeRole calls: want A and B (C is inactive)")
	ex := e.executions(t, sid)
	code := func(acct string) any {
		d := ex[arns[acct]][0]
		errD, _ := d["error"].(map[string]any)
		return fmt.Sprint(d["status"], " ", errD["code"], " ", d["call"])
	}
	for acct, want := range map[string]string{acctA: "SUCCESS <nil> ec2:StartInstances", acctB: "FAIL AccessDenied sts:AssumeRole", acctC: "FAIL AccountInactive <nil>"} {
		assert.Equal(t, want, code(acct), "account %s", acct)
	}
}

// Every action the executor records is one ResourceActions measurement
// by kind and outcome (EMF, in the function's log): a role that denies is
// a failed action the FailedResourceActions alarm counts.
func TestExecutorCountsResourceActions(t *testing.T) {
	e := newExecEnv(t)
	var logs syncLog
	cfg := e.cfg
	cfg.Logger = logx.New(&logs, slog.LevelInfo).With(svc.MetricDimension, contract.Executor.Name)
	x, err := nucleus.NewExecutorFromConfig(cfg)
	require.NoError(t, err)
	e.x = x
	e.accountWithRole(t, acctA)
	e.createAccount(t, acctB, "untrusted", "active") // role not trusted by the fake STS
	fire := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	sid := e.scheduleAt(t, "UTC", []time.Time{fire}, []time.Time{fire.Add(time.Hour)})
	for i, acct := range []string{acctA, acctB} {
		id := fmt.Sprintf("i-%017x", i+1)
		e.ec2.AddInstance(id, awsloop.InstanceStopped)
		e.attach(t, sid, "ec2", "us-east-1", acct, "arn:aws:ec2:us-east-1:"+acct+":instance/"+id)
	}
	e.run(t, fire.Add(time.Minute))
	ms, err := metrics.ParseLines(logs.bytes())
	require.NoError(t, err, "EMF lines")
	for outcome, want := range map[string]float64{contract.OutcomeSucceeded: 1, contract.OutcomeFailed: 1} {
		got := metrics.Find(ms, contract.ResourceActions.Name, map[string]string{
			svc.MetricDimension: contract.Executor.Name, contract.DimKind: contract.KindEC2, contract.DimOutcome: outcome})
		assert.Equal(t, want, metrics.Sum(got), "ec2 actions %s", outcome)
	}
	assert.Equal(t, 2.0, metrics.Sum(metrics.Find(ms, contract.ResourceActions.Name, map[string]string{svc.MetricDimension: contract.Executor.Name})), "all actions")
}

// syncLog is a log sink the executor's goroutines share.
type syncLog struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncLog) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b...)
}
