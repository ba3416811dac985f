package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pm "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/catalog"
	itsm "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleus "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rez "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stak "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/alarmeval"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// alarmPeriod is the local length of a 300 s alarm period in these
// tests (LOCAL_ALARM_PERIOD).
const alarmPeriod = 3 * time.Second

// alarmScenario is a fault and the alarms it must raise: exactly those,
// named "<stack>/<construct id>" (the alarm's logical id without CDK's
// hash), e.g. "rezagent/ProcessorFailedForGood".
type alarmScenario struct {
	name  string
	fires []string
	drive func(t *testing.T, r *runner)
}

// alarmScenarios run in order on one runner (one set of processes for
// all: the machine has two cores). Each drives the real fault its alarm
// watches. TestEveryAlarmKindHasAScenario holds this list to every
// stage's templates.
var alarmScenarios = []alarmScenario{
	{
		// An expired ntfy token: every delivery is refused with 401 and
		// acknowledged, never retried (rez_agent's processor).
		name: "ntfy answers 401", fires: []string{"rezagent/ProcessorFailedForGood"},
		drive: func(t *testing.T, r *runner) {
			const n = 40
			call(t, "POST", r.base+"/_local/ntfy-faults", fmt.Sprintf(`{"status":401,"count":%d}`, n), 200, nil)
			// 40 at a period's start, 8 at a time, so that at least 20
			// finish in one period: one after another they took up to
			// 150 ms each on a loaded machine (make test fuzzes beside
			// the runner tests) and straddled two periods with fewer than
			// 20 in each.
			startOfPeriod()
			got := atOnce(n, 8, func(i int) int {
				return statusOf(rez.CreateMessage.Method, at(r.base, rez.Name, rez.CreateMessage), message(fmt.Sprintf("expired token %d", i)))
			})
			require.Equal(t, map[int]int{http.StatusCreated: n}, got, "answers to %d messages", n)
		},
	},
	{
		// A poison message: a body the processor cannot read, retried
		// until the queue's redrive moves it to the DLQ.
		name: "poison message", fires: []string{"rezagent/NotificationsDLQDepth"},
		drive: func(t *testing.T, r *runner) {
			tmpl, err := cfntables.Load(testenv.Template(t, "dev", rez.Name))
			require.NoError(t, err)
			subs, err := tmpl.QueueSubscriptions()
			require.NoError(t, err)
			require.Len(t, subs, 1, "rez_agent's queue subscriptions")
			call(t, "POST", r.base+"/_local/topics", fmt.Sprintf(`{"topic_arn":%q,"message":"not a notice"}`, cfntables.LocalARN("sns", subs[0].Topic)), 200, nil)
		},
	},
	{
		// The processor's event source mapping disabled (or its reserved
		// concurrency set to 0): a message waits in the queue; SQS keeps
		// publishing its age each minute, and past 15 minutes (9 s here)
		// the age alarm goes. Nothing else: the processor is not invoked,
		// so it neither fails nor is throttled. Enabled again, the
		// message is delivered.
		name: "queue consumer disabled", fires: []string{"rezagent/NotificationsQueueAge"},
		drive: func(t *testing.T, r *runner) {
			mapping := r.base + "/_local/mappings/" + rez.Processor.Name
			call(t, "POST", mapping, `{"enabled":false}`, 200, nil)
			t.Cleanup(func() { call(t, "POST", mapping, `{"enabled":true}`, 200, nil) })
			call(t, rez.CreateMessage.Method, at(r.base, rez.Name, rez.CreateMessage), message("waits"), 201, nil)
		},
	},
	{
		// A target account whose role no longer trusts the executor.
		name: "executor role denies", fires: []string{"nucleus/ExecutorFailedResourceActions"},
		drive: func(t *testing.T, r *runner) {
			const account = "210987654321"
			role := "arn:aws:iam::" + account + ":role/nucleus-executor-alarm-test"
			h := map[string]string{"X-User-Id": "alarms@example.com"}
			send(t, nucleus.CreateAccount.Method, at(r.base, nucleus.Name, nucleus.CreateAccount), fmt.Sprintf(`{"account_id":%q,"account_name":"Denies","role_arn":%q}`, account, role), h, 201, nil)
			call(t, "POST", r.base+"/_local/sts/deny", fmt.Sprintf(`{"role_arn":%q}`, role), 200, nil)
			var s struct {
				ID string `json:"schedule_id"`
			}
			send(t, nucleus.CreateSchedule.Method, at(r.base, nucleus.Name, nucleus.CreateSchedule),
				`{"schedule_name":"Every minute","start_cron":"* * * * *","end_cron":"0 0 1 1 *","timezone":"UTC","enabled":true}`, h, 201, &s)
			send(t, nucleus.AttachResource.Method, at(r.base, nucleus.Name, nucleus.AttachResource, s.ID),
				fmt.Sprintf(`{"resource_arn":"arn:aws:ec2:eu-central-1:%s:instance/i-0123456789abcdef0","resource_type":"ec2","region":"eu-central-1","account_id":%q}`, account, account), h, 0, nil)
			// Timed two minutes ago: a minute's fire lies between then and
			// now, which the executor's run acts on.
			setItem(t, r, nucleus.AppTableBaseName+"-dev", map[string]string{nucleus.AttrPK: nucleus.PrefixSchedule + s.ID, nucleus.AttrSK: nucleus.KeyMetadata},
				map[string]string{nucleus.AttrTimingChangedAt: ddb.SortableTime(time.Now().Add(-2 * time.Minute))})
			call(t, "POST", r.base+"/_local/schedules/nucleus-executor", "", 200, nil)
		},
	},
	{
		// The release job stopped past a held action's time: the next run
		// finds it overdue by more than the grace.
		name: "release job stopped", fires: []string{"agenticpm/ReleaseOverdueHeldActions"},
		drive: func(t *testing.T, r *runner) {
			var p struct {
				ID string `json:"id"`
			}
			call(t, pm.CreateProject.Method, at(r.base, pm.Name, pm.CreateProject), `{"name":"Alarms","source":"jira","sourceProjectKey":"ALM","autonomyLevel":"monitoring"}`, 201, &p)
			until := time.Now().Add(agenticpm.MinHold + time.Minute).UTC().Format(time.RFC3339Nano)
			var a struct {
				ID        string `json:"id"`
				CreatedAt string `json:"createdAt"`
			}
			call(t, pm.RecordAction.Method, at(r.base, pm.Name, pm.RecordAction, p.ID), fmt.Sprintf(`{"actionType":"email_sent","description":"status","heldUntil":%q}`, until), 201, &a)
			past := agenticpm.Timestamp(time.Now().Add(-(pm.OverdueGraceMinutes + 1) * time.Minute))
			setItem(t, r, pm.TableBaseName+"-dev", map[string]string{pm.AttrPK: pm.ProjectPK(p.ID), pm.AttrSK: pm.ActionSK(a.CreatedAt, a.ID)},
				map[string]string{pm.AttrHeldUntil: past, pm.AttrGSI1SK: past + "#" + a.ID})
			call(t, "POST", r.base+"/_local/schedules/agenticpm-release", "", 200, nil)
		},
	},
	{
		// A Stak counter edited by hand, then the hourly drift check's run
		// (it waits stak.DriftSettle to confirm a suspect counter).
		name: "counter edited by hand", fires: []string{"stak/DriftCheckCounterDrift"},
		drive: func(t *testing.T, r *runner) {
			const tenant, inbox, uid = "alarms", "drift", "u1"
			call(t, stak.PutTenant.Method, at(r.base, stak.Name, stak.PutTenant, tenant), `{"title":"alarm test"}`, 200, nil)
			call(t, stak.PutInbox.Method, at(r.base, stak.Name, stak.PutInbox, tenant, inbox), `{"title":"drift","ttl":{"default":"1d"}}`, 200, nil)
			call(t, stak.Publish.Method, at(r.base, stak.Name, stak.Publish, tenant, inbox),
				`{"sender":"alarm-test","audiences":{"kind":"users","uids":["`+uid+`"]},"message":{"title":"counted"}}`, 201, nil)
			addNumber(t, r, stak.TableBaseName+"-dev", map[string]string{stak.AttrPK: stak.UserPK(tenant, uid, inbox), stak.AttrSK: stak.KeyStatsAll}, stak.AttrPublished, 3)
			call(t, "POST", r.base+"/_local/schedules/"+stak.DriftCheck.Name, "", 200, nil)
		},
	},
	{
		// Stak's stream consumer more than 15 minutes (9 s here) behind
		// its stream for three periods. Its mapping's filter hands it only
		// TTL deletions of messages (the stack's FilterCriteria; the poller
		// applies it), so only expiries invoke it and publish IteratorAge:
		// ordinary writes, filtered out, never do. So the fault is the one
		// AWS would page on: the mapping disabled (or the function's
		// concurrency at 0) while messages expire, then enabled while the
		// consumer's counter writes fail (DynamoDB answers its
		// TransactWriteItems what the SDK cannot read). Each batch is
		// retried MaximumRetryAttempts times, each invocation publishing
		// the age of its last record, as Lambda does; then it is given up
		// on (StreamConsumerGaveUpDepth). One batch's 11 invocations, 0.5 s
		// apart, span about two periods; the alarm needs three in a row,
		// so two batches, one after the other: two waves of expiries with
		// 100 ordinary writes between them (the tenant's settings, which
		// the consumer never sees), since the mapping reads its stream 100
		// records at a time (BatchSize). Messages expire by their inbox's
		// own TTL (1 s). DynamoDB Local's TTL job deletes what it finds in
		// 20 scanned items per 10 s (the stak table here has fewer), so a
		// wave is gone within about 11 s of expiring; 101 expiries in one
		// wave, as this scenario once had, took 50 s.
		// Not StreamConsumerErrors: the consumer reports item failures,
		// not function errors; not the table's SystemErrors: no 500s.
		name: "stream consumer behind", fires: []string{"stak/StreamConsumerIteratorAge", "stak/StreamConsumerGaveUpDepth"},
		drive: func(t *testing.T, r *runner) {
			const tenant, inbox, uid, wave = "alarms", "lag", "u1", 3
			mark := r.stderr.len()
			// Every expiry read whole: DynamoDB Local's {} for an
			// uncategorised message's taxonomy once made the consumer skip a
			// whole wave, and the second batch never failed.
			t.Cleanup(func() {
				for _, line := range r.stderr.since(mark) {
					assert.NotContains(t, line, "skipping unreadable stream image")
				}
			})
			mapping := r.base + "/_local/mappings/" + stak.StreamConsumer.Name
			call(t, "POST", mapping, `{"enabled":false}`, 200, nil)
			t.Cleanup(func() { call(t, "POST", mapping, `{"enabled":true}`, 200, nil) })
			call(t, stak.PutTenant.Method, at(r.base, stak.Name, stak.PutTenant, tenant), `{"title":"alarm test"}`, 200, nil)
			call(t, stak.PutInbox.Method, at(r.base, stak.Name, stak.PutInbox, tenant, inbox), `{"title":"lag","ttl":{"default":"1s"}}`, 200, nil)
			ctx, client, table := context.Background(), tableClient(t, r), aws.String(stak.TableBaseName+"-dev"+r.suffix)
			messages := func() int {
				out, err := client.Query(ctx, &dynamodb.QueryInput{TableName: table, Select: types.SelectCount,
					KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :m)"),
					ExpressionAttributeNames:  map[string]string{"#pk": stak.AttrPK, "#sk": stak.AttrSK},
					ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: stak.UserPK(tenant, uid, inbox)}, ":m": &types.AttributeValueMemberS{Value: stak.PrefixMessage}}})
				require.NoError(t, err)
				return int(out.Count)
			}
			expire := func(n int) {
				start := time.Now()
				for i := range n {
					call(t, stak.Publish.Method, at(r.base, stak.Name, stak.Publish, tenant, inbox),
						fmt.Sprintf(`{"sender":"alarm-test","audiences":{"kind":"users","uids":[%q]},"message":{"title":"lag %d"}}`, uid, i), 201, nil)
				}
				require.Eventually(t, func() bool { return messages() == 0 }, 45*time.Second, 250*time.Millisecond, "DynamoDB Local's TTL job to delete the %d expired messages", n)
				t.Logf("%d messages published and deleted by TTL in %s", n, time.Since(start).Round(100*time.Millisecond))
			}
			expire(wave)
			for i := range 100 {
				call(t, stak.PutTenant.Method, at(r.base, stak.Name, stak.PutTenant, tenant), fmt.Sprintf(`{"title":"alarm test %d"}`, i), 200, nil)
			}
			expire(wave)
			// The second wave's records past 15 minutes old too (the
			// stream's stamps are its own reader's, up to a poll later
			// than the deletion the test saw), then the consumer enabled
			// with its writes failing.
			time.Sleep(alarmPeriod * 7 / 2)
			call(t, "POST", r.base+"/_local/faults", `{"faults":"garbage:1","next":5000,"on":"TransactWriteItems"}`, 200, nil)
			t.Cleanup(func() { call(t, "POST", r.base+"/_local/faults", `{"faults":""}`, 200, nil) })
			call(t, "POST", mapping, `{"enabled":true}`, 200, nil)
			// Two batches given up on: the waves came in two.
			require.Eventually(t, func() bool {
				var q struct {
					Depth map[string]int `json:"depth"`
				}
				call(t, "GET", r.base+"/_local/queues", "", 200, &q)
				for name, n := range q.Depth {
					if matches("stak/StreamFailures")(name) {
						return n == 2
					}
				}
				return false
			}, 40*time.Second, alarmPeriod/10, "two batches on the stream's failure queue (22 invocations, 0.5 s apart when the machine is idle)")
		},
	},
	{
		// One route slow: each of a create's first two writes (the
		// idempotency claim and the ticket) answered 4.2 s late, within
		// the SDK's 5 s attempt timeout, so the request takes about 8.4 s:
		// the route's p99 and the function's are past 80% of its 10 s.
		name: "route slow", fires: []string{"itsm/RoutePostTicketsLatency", "itsm/HandlerDuration"},
		drive: func(t *testing.T, r *runner) {
			call(t, "POST", r.base+"/_local/faults", `{"faults":"latency:1:4200ms","next":2,"on":"PutItem"}`, 200, nil)
			t.Cleanup(func() { call(t, "POST", r.base+"/_local/faults", `{"faults":""}`, 200, nil) })
			send(t, itsm.CreateTicket.Method, at(r.base, itsm.Name, itsm.CreateTicket), `{"caller_id":"sess-alarms","issue_description":"slow"}`,
				map[string]string{"Idempotency-Key": "alarms-route-slow"}, 201, nil)
		},
	},
	{
		// DynamoDB answers 500 to every request for a moment.
		name: "dynamodb system errors", fires: []string{"itsm/TicketsSystemErrors"},
		drive: func(t *testing.T, r *runner) {
			faults(t, r, "5xx:1")
			for range 5 {
				call(t, itsm.ListTickets.Method, r.base+"/"+itsm.Name+itsm.ListTickets.URLQuery(service.Values{itsm.ParamCaller: "sess-alarms"}), "", 503, nil)
			}
		},
	},
	{
		// The table at its cap for two periods: reads (of its index) and
		// writes throttled.
		name: "dynamodb throttles", fires: []string{"itsm/TicketsReadThrottles", "itsm/TicketsWriteThrottles"},
		drive: func(t *testing.T, r *runner) {
			faults(t, r, "throttle:1")
			end := time.Now().Add(alarmPeriod * 5 / 2)
			for time.Now().Before(end) {
				call(t, itsm.ListTickets.Method, r.base+"/"+itsm.Name+itsm.ListTickets.URLQuery(service.Values{itsm.ParamCaller: "sess-alarms"}), "", 503, nil)
				call(t, itsm.CreateTicket.Method, at(r.base, itsm.Name, itsm.CreateTicket), `{"caller_id":"sess-alarms","issue_description":"throttled"}`, 503, nil)
				time.Sleep(alarmPeriod / 10)
			}
		},
	},
	{
		// DynamoDB answers what the SDK cannot read: the function answers
		// 500 (a fault, not a client's mistake nor a 503 to retry).
		name: "dependency answers garbage", fires: []string{"itsm/ApiServerErrors"},
		drive: func(t *testing.T, r *runner) {
			faults(t, r, "garbage:1")
			// 20 in one period, 8 at a time (as "ntfy answers 401").
			startOfPeriod()
			list := r.base + "/" + itsm.Name + itsm.ListTickets.URLQuery(service.Values{itsm.ParamCaller: "sess-alarms"})
			got := atOnce(20, 8, func(int) int { return statusOf(itsm.ListTickets.Method, list, "") })
			require.Equal(t, map[int]int{http.StatusInternalServerError: 20}, got, "answers to 20 requests")
		},
	},
	{
		// More requests at once than the function's reserved
		// concurrency (DynamoDB slow for a moment): the excess is
		// throttled, and API Gateway answers those 500.
		name: "reserved concurrency reached", fires: []string{"itsm/HandlerThrottles", "itsm/ApiServerErrors"},
		drive: func(t *testing.T, r *runner) {
			tmpl, id := itsmAPIFunction(t)
			var p struct{ ReservedConcurrentExecutions int }
			require.NoError(t, json.Unmarshal(tmpl.Resources[id].Properties, &p))
			require.Positive(t, p.ReservedConcurrentExecutions, "ITSM's API reserved concurrency")
			n := p.ReservedConcurrentExecutions + 5
			faults(t, r, "latency:1:1s")
			startOfPeriod()
			list := r.base + "/" + itsm.Name + itsm.ListTickets.URLQuery(service.Values{itsm.ParamCaller: "sess-alarms"})
			got := atOnce(n, n, func(int) int { return statusOf(itsm.ListTickets.Method, list, "") })
			assert.Equal(t, map[int]int{200: p.ReservedConcurrentExecutions, 500: 5}, got, "answers to %d requests at once", n)
		},
	},
	{
		// One invocation of 20 times out (DynamoDB slower than the
		// function's timeout): a function error and a p99 duration at the
		// timeout. Not the API's 5xx alarm: API Gateway answers 502, but
		// the function, at its deadline, answers 503 and counts it
		// Unavailable, which that alarm leaves out (as it may in Lambda,
		// where the line races the runtime's freeze). The same 503 writes
		// the route's RouteLatency line, at about the timeout: its route
		// alarm goes too (in Lambda, as that line races the freeze, it
		// may not).
		name: "function timeout", fires: []string{"itsm/HandlerErrors", "itsm/HandlerDuration", "itsm/RouteGetTicketsLatency"},
		drive: func(t *testing.T, r *runner) {
			list := r.base + "/" + itsm.Name + itsm.ListTickets.URLQuery(service.Values{itsm.ParamCaller: "sess-alarms"})
			tmpl, id := itsmAPIFunction(t)
			timeout := tmpl.Timeout(id)
			// The slow call ends just after a period starts, and the 19
			// fast ones follow in the same period.
			next := time.Now().Add(timeout + 200*time.Millisecond).Truncate(alarmPeriod).Add(alarmPeriod)
			time.Sleep(time.Until(next.Add(-timeout + 100*time.Millisecond)))
			// The SDK gives up on an attempt after a few seconds and
			// retries: every attempt of the slow call meets the latency
			// (the planned ones left are cleared once it has timed out).
			call(t, "POST", r.base+"/_local/faults", `{"faults":"latency:1:12s","next":5}`, 200, nil)
			slow := make(chan int, 1)
			go func() { slow <- statusOf(itsm.ListTickets.Method, list, "") }()
			require.Equal(t, http.StatusBadGateway, <-slow, "the timed-out call")
			faults(t, r, "")
			for range 19 {
				call(t, itsm.ListTickets.Method, list, "", 200, nil)
			}
		},
	},
}

// The alarms of the dev stage as make dev evaluates them: the healthy
// scenario leaves every alarm OK, and each fault raises exactly the
// alarms its scenario names.
func TestAlarmsFire(t *testing.T) {
	t.Parallel()
	// Its own DynamoDB Local (ownJava): stream_consumer_behind waits for
	// its TTL job on the stak table, a pass every 10 s or so. DynamoDB
	// Local runs every table's TTL job and its own schedulers on one pool
	// of 10 threads, each pass holding one for 10 s after each page: on
	// the shared server, every test's tables with TTL queue for them.
	r := startEnv(t, filepath.Dir(testenv.Template(t, "dev", "itsm")), append(slices.Clone(ownJava),
		"LOCAL_ALARM_PERIOD="+alarmPeriod.String(),
		// No scheduled run but the first: the scenarios run the jobs.
		"LOCAL_SCHEDULE_EVERY=1h",
		// A failed record's retry after 1 s: the poison message reaches
		// the DLQ after five receives within a few periods. Not less: a
		// batch still running when its records turn visible again is
		// received again (SQS's timeout is above the function's; this one
		// is not), and on a loaded machine 300 ms sent 40 good messages
		// of "ntfy answers 401" round five times, into the DLQ.
		"LOCAL_VISIBILITY_TIMEOUT=1s",
	))
	t.Run("healthy", func(t *testing.T) {
		for i := range 25 {
			var tk struct {
				ID string `json:"ticket_id"`
			}
			call(t, itsm.CreateTicket.Method, at(r.base, itsm.Name, itsm.CreateTicket), `{"caller_id":"sess-alarms","issue_description":"healthy `+fmt.Sprint(i)+`"}`, 201, &tk)
			call(t, itsm.GetTicket.Method, at(r.base, itsm.Name, itsm.GetTicket, tk.ID), "", 200, nil)
		}
		call(t, rez.CreateMessage.Method, at(r.base, rez.Name, rez.CreateMessage), message("healthy"), 201, nil)
		// Two full periods after the traffic.
		time.Sleep(2 * alarmPeriod)
		var page struct {
			Refused map[string]int `json:"refused_emf_lines"`
		}
		call(t, "GET", r.base+"/_local/alarms", "", 200, &page)
		assert.Empty(t, page.Refused, "EMF lines CloudWatch would drop")
		states := alarmStates(t, r)
		require.NotEmpty(t, states, "alarms at /_local/alarms")
		for name, state := range states {
			assert.Equal(t, "OK", state, "alarm %s in a healthy run", name)
		}
		assert.Empty(t, fired(r, 0), "alarms that went to ALARM in a healthy run")
	})
	for _, sc := range alarmScenarios {
		ok := t.Run(sc.name, func(t *testing.T) {
			mark := r.stderr.len()
			sc.drive(t, r)
			require.Eventually(t, func() bool {
				got := fired(r, mark)
				return !slices.ContainsFunc(sc.fires, func(w string) bool { return !slices.ContainsFunc(got, matches(w)) })
			}, 8*alarmPeriod, alarmPeriod/10, "alarms %v to go to ALARM", sc.fires)
			// One more period: an alarm the fault should not raise has had
			// its evaluation.
			time.Sleep(alarmPeriod + alarmPeriod/2)
			got := fired(r, mark)
			for _, name := range got {
				assert.True(t, slices.ContainsFunc(sc.fires, func(w string) bool { return matches(w)(name) }), "alarm %s went to ALARM; the scenario raises only %v", name, sc.fires)
			}
		})
		if !ok {
			// Later scenarios would see this one's alarms.
			return
		}
	}
}

// TestEveryAlarmKindHasAScenario: every alarm of every stage watches what
// some scenario of TestAlarmsFire proves fires (an alarm kind: the
// metrics it reads, alarmeval.Def.Kind). A new kind of alarm fails here
// until a scenario drives its fault.
func TestEveryAlarmKindHasAScenario(t *testing.T) {
	proven := map[string]string{} // kind → scenario
	dev := devAlarms(t)
	for _, sc := range alarmScenarios {
		for _, w := range sc.fires {
			i := slices.IndexFunc(dev, func(d *alarmeval.Def) bool { return matches(w)(d.Name) })
			if assert.GreaterOrEqual(t, i, 0, "scenario %q names alarm %s, which the dev templates do not have", sc.name, w) {
				proven[dev[i].Kind()] = sc.name
			}
		}
	}
	alarms := 0
	for _, stage := range []string{"dev", "stage", "prod"} {
		for _, c := range catalog.Services() {
			for _, d := range templateAlarms(t, stage, c.Name) {
				alarms++
				if k := d.Kind(); proven[k] == "" {
					t.Errorf("%s/%s alarm %s watches %s, which no scenario of TestAlarmsFire drives: add one (its fault, and the alarms it raises)", stage, c.Name, d.LogicalID, k)
				}
			}
		}
	}
	require.Positive(t, alarms, "alarms in the stages' templates")
	t.Logf("%d alarms of %d kinds, every kind proven by a scenario", alarms, len(proven))
}

// devAlarms are the alarms of every dev template, named as the runner
// names them.
func devAlarms(t *testing.T) []*alarmeval.Def {
	var out []*alarmeval.Def
	for _, c := range catalog.Services() {
		out = append(out, templateAlarms(t, "dev", c.Name)...)
	}
	return out
}

func templateAlarms(t *testing.T, stage, svc string) []*alarmeval.Def {
	t.Helper()
	tmpl, err := cfntables.Load(testenv.Template(t, stage, svc))
	require.NoError(t, err)
	res := map[string]json.RawMessage{}
	for id, r := range tmpl.Resources {
		b, err := json.Marshal(struct {
			Type       string
			Properties json.RawMessage
		}{r.Type, r.Properties})
		require.NoError(t, err)
		res[id] = b
	}
	defs, err := alarmeval.FromTemplate(tmpl.Stack, res, func(id, attr string) (string, error) { return id, nil })
	require.NoError(t, err, "%s/%s: every alarm is one the local evaluator reads", stage, svc)
	return defs
}

// matches is whether an alarm's local name ("<stack>-<logical id>") is
// the alarm want names ("<stack>/<construct id>"; CDK adds 8 hex digits).
func matches(want string) func(string) bool {
	stack, id, _ := strings.Cut(want, "/")
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(stack+"-"+id) + `[0-9A-F]{8}$`)
	return re.MatchString
}

// fired lists the alarms the runner logged going to ALARM from its
// from'th log line on.
func fired(r *runner, from int) []string {
	var out []string
	for _, line := range r.stderr.since(from) {
		var rec struct {
			Msg, Alarm, To string
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "alarm state changed" && rec.To == "ALARM" && !slices.Contains(out, rec.Alarm) {
			out = append(out, rec.Alarm)
		}
	}
	sort.Strings(out)
	return out
}

// alarmStates are the states GET /_local/alarms shows, by name.
func alarmStates(t *testing.T, r *runner) map[string]string {
	t.Helper()
	var out struct {
		Alarms []struct{ Name, State string }
	}
	call(t, "GET", r.base+"/_local/alarms", "", 200, &out)
	states := map[string]string{}
	for _, a := range out.Alarms {
		states[a.Name] = a.State
	}
	return states
}

// startOfPeriod waits until just after a period starts: the runner's
// periods are wall-clock multiples of alarmPeriod, as CloudWatch's are of
// theirs, and a burst that an alarm needs in one period starts there.
func startOfPeriod() {
	time.Sleep(time.Until(time.Now().Truncate(alarmPeriod).Add(alarmPeriod + 50*time.Millisecond)))
}

func message(text string) string {
	return `{"message_type":"manual_notification","created_by":"user:alarms@example.com","payload":{"text":"` + text + `","title":"alarms","priority":"high"}}`
}

func faults(t *testing.T, r *runner, spec string) {
	t.Helper()
	call(t, "POST", r.base+"/_local/faults", fmt.Sprintf(`{"faults":%q}`, spec), 200, nil)
	if spec != "" {
		t.Cleanup(func() { call(t, "POST", r.base+"/_local/faults", `{"faults":""}`, 200, nil) })
	}
}

// atOnce makes n requests, at most width at a time, and counts their
// answers by status.
func atOnce(n, width int, status func(i int) int) map[int]int {
	codes, slots := make(chan int, n), make(chan struct{}, width)
	for i := range n {
		slots <- struct{}{}
		go func() {
			defer func() { <-slots }()
			codes <- status(i)
		}()
	}
	got := map[int]int{}
	for range n {
		got[<-codes]++
	}
	return got
}

// statusOf sends a JSON body and returns the answer's status, 0 when the
// request failed: for goroutines, which may not stop the test.
func statusOf(method, url, body string) int {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// send is call with request headers; wantStatus 0 takes any 2xx.
func send(t *testing.T, method, url, body string, h map[string]string, wantStatus int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if wantStatus == 0 {
		require.True(t, resp.StatusCode/100 == 2, "%s %s: status %d; body %s", method, url, resp.StatusCode, b)
	} else {
		require.Equal(t, wantStatus, resp.StatusCode, "%s %s: status; body %s", method, url, b)
	}
	if out != nil {
		require.NoError(t, json.Unmarshal(b, out), "%s", b)
	}
}

// tableClient is a client of the runner's DynamoDB Local, for edits by
// hand.
func tableClient(t *testing.T, r *runner) *dynamodb.Client {
	t.Helper()
	m := regexp.MustCompile(`dynamodb (http://[0-9.:]+)`).FindStringSubmatch(r.ready)
	require.NotNil(t, m, "no DynamoDB endpoint in the ready line %q", r.ready)
	client, err := ddb.NewClient(context.Background(), ddblocal.WithEndpoint(m[1], nil))
	require.NoError(t, err)
	return client
}

func keyOf(key map[string]string) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{}
	for k, v := range key {
		out[k] = &types.AttributeValueMemberS{Value: v}
	}
	return out
}

// setItem sets string attributes of an existing item of the runner's
// table (its base name and stage; the runner's suffix is added).
func setItem(t *testing.T, r *runner, table string, key, set map[string]string) {
	t.Helper()
	update, names, values := "SET", map[string]string{}, map[string]types.AttributeValue{}
	i := 0
	for _, attr := range slices.Sorted(maps.Keys(set)) {
		n, v := fmt.Sprintf("#a%d", i), fmt.Sprintf(":v%d", i)
		if i > 0 {
			update += ","
		}
		update += " " + n + " = " + v
		names[n], values[v] = attr, &types.AttributeValueMemberS{Value: set[attr]}
		i++
	}
	names["#k"] = firstKey(key)
	_, err := tableClient(t, r).UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(table + r.suffix), Key: keyOf(key),
		UpdateExpression: aws.String(update), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		ConditionExpression: aws.String("attribute_exists(#k)")})
	require.NoError(t, err, "edit %v of %s", key, table)
}

// addNumber adds n to a number attribute of an item, as a person editing
// the table by hand would.
func addNumber(t *testing.T, r *runner, table string, key map[string]string, attr string, n int) {
	t.Helper()
	_, err := tableClient(t, r).UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(table + r.suffix), Key: keyOf(key),
		UpdateExpression: aws.String("ADD #a :n"), ExpressionAttributeNames: map[string]string{"#a": attr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: fmt.Sprint(n)}}})
	require.NoError(t, err, "edit %v of %s", key, table)
}

func firstKey(key map[string]string) string {
	ks := make([]string, 0, len(key))
	for k := range key {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks[0]
}

// itsmAPIFunction is the dev stage's ITSM template and its API function's
// logical id, whose limits two scenarios drive past.
func itsmAPIFunction(t *testing.T) (*cfntables.Template, string) {
	t.Helper()
	tmpl, err := cfntables.Load(testenv.Template(t, "dev", itsm.Name))
	require.NoError(t, err)
	fns, err := tmpl.Functions()
	require.NoError(t, err)
	i := slices.IndexFunc(fns, func(f cfntables.Function) bool { return f.Service() == itsm.Name })
	require.GreaterOrEqual(t, i, 0, "ITSM's API function in its template")
	return tmpl, fns[i].LogicalID
}
