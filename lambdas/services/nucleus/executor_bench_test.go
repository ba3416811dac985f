package nucleus_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/dynastack/dynastack/lambdas/services/nucleus/executor"
)

// meteredExecutor is an executor on e's tables and fakes whose DynamoDB
// requests m counts.
func (e *execEnv) meteredExecutor(t testing.TB, m *ddbrecord.Recorder) *nucleus.Executor {
	t.Helper()
	x, err := nucleus.NewExecutorFromConfig(nucleus.ExecutorConfig{Tables: e.tables, Client: m.Client(e.Client),
		Cloud: nucleus.NewCloudFromConfig(awsloop.Config(executorKey), map[string]string{
			nucleus.EnvEndpointSTS: e.sts.URL(), nucleus.EnvEndpointEC2: e.ec2.URL(),
			nucleus.EnvEndpointRDS: e.rds.URL(), nucleus.EnvEndpointECS: e.ecs.URL(),
		}), Act: executor.Act, Now: e.now, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err, "the metered executor")
	return x
}

// everyMinute is a schedule whose start fires every minute, with resources
// EC2 instances of one account.
func (e *execEnv) everyMinute(t testing.TB, resources int) {
	t.Helper()
	e.accountWithRole(t, acctA)
	e.MustRoute(t, 201, contract.CreateSchedule, `{"schedule_name":"every minute","start_cron":"* * * * *","end_cron":"0 0 1 1 *","timezone":"UTC","enabled":true}`, nil)
	var page nucleus.SchedulePage
	e.MustRoute(t, 200, contract.ListSchedules, "", &page)
	for i := range resources {
		id := fmt.Sprintf("i-%017x", i+1)
		e.ec2.AddInstance(id, awsloop.InstanceStopped)
		e.attach(t, page.Schedules[0].ScheduleID, "ec2", "us-east-1", acctA, "arn:aws:ec2:us-east-1:"+acctA+":instance/"+id)
	}
}

// The DynamoDB requests of a run, against the minimum its access pattern
// needs (docs/schemas/nucleus.md, "Executor cost"): per run one GSI1 query
// of the schedules; per due action a peek at its claim, the claim, one
// query of the schedule's partition, one read per account and the
// finished claim; per resource action one transaction (marker + entry).
func TestExecutorDynamoDBRequests(t *testing.T) {
	for _, resources := range []int{1, 10} {
		t.Run(fmt.Sprintf("resources=%d", resources), func(t *testing.T) {
			e := newExecEnv(t)
			e.everyMinute(t, resources)
			m := &ddbrecord.Recorder{}
			x := e.meteredExecutor(t, m)
			run := func(at time.Time) {
				e.setClock(at)
				m.Reset()
				require.NoError(t, x.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: at}), "run at %s", at)
			}
			fire := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)

			run(fire.Add(10 * time.Second))
			t.Logf("due action, %d resources: %s; %.1f capacity units", resources, m, m.Capacity())
			want := map[string]int{"Query": 2, "GetItem": 2, "PutItem": 2, "TransactWriteItems": resources}
			for op, n := range want {
				assert.Equal(t, n, m.Requests(op), "due action: %s requests (%s)", op, m)
			}
			assert.Equal(t, 6+resources, m.Requests(), "due action: requests (%s)", m)

			run(fire.Add(40 * time.Second))
			t.Logf("fire already executed: %s; %.1f capacity units", m, m.Capacity())
			assert.Equal(t, 1, m.Requests("Query"), "repeat run: Query requests (%s)", m)
			assert.Equal(t, 1, m.Requests("GetItem"), "repeat run: GetItem requests (%s)", m)
			assert.Equal(t, 2, m.Requests(), "repeat run: requests (%s)", m)
		})
	}
}

// BenchmarkExecutorRun is one run with one due action over N resources.
func BenchmarkExecutorRun(b *testing.B) {
	for _, resources := range []int{1, 10} {
		b.Run(fmt.Sprintf("resources=%d", resources), func(b *testing.B) {
			e := newExecEnv(b)
			e.everyMinute(b, resources)
			m, total := &ddbrecord.Recorder{}, &ddbrecord.Recorder{}
			x := e.meteredExecutor(b, m)
			base := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Each iteration is the next minute: a new fire.
				at := base.Add(time.Duration(i)*time.Minute + 10*time.Second)
				e.setClock(at)
				m.Reset()
				// Timed: the assertion only on the failure path.
				if err := x.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: at}); err != nil {
					require.NoError(b, err, "run at %s", at)
				}
				total.Add(m)
			}
			b.StopTimer()
			runs := float64(b.N)
			b.ReportMetric(float64(total.Requests())/runs, "ddb-req/run")
			b.ReportMetric(total.Capacity()/runs, "ddb-cu/run")
			b.ReportMetric(float64(total.Requests("TransactWriteItems"))/runs/float64(resources), "ddb-tx/resource")
		})
	}
}
