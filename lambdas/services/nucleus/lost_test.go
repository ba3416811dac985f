package nucleus_test

import (
	"context"
	"testing"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run whose claim of an execution DynamoDB applied but whose answer was
// lost finds its own claim when the SDK retries, and acts in that run,
// once, instead of standing down until its own 15-minute lease ends.
func TestExecutorClaimWithLostAnswer(t *testing.T) {
	e := newExecEnv(t)
	e.accountWithRole(t, acctA)
	fire := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	sid := e.scheduleAt(t, "UTC", []time.Time{fire}, []time.Time{fire.Add(time.Hour)})
	e.ec2.AddInstance("i-0000000000000001a", awsloop.InstanceStopped)
	e.attach(t, sid, "ec2", "us-east-1", acctA, "arn:aws:ec2:us-east-1:"+acctA+":instance/i-0000000000000001a")

	client, proxy := servicetest.FaultyClient(t, "nucleus-executor")
	cfg := e.cfg
	cfg.Client = client
	x, err := nucleus.NewExecutorFromConfig(cfg)
	require.NoError(t, err)
	at := fire.Add(time.Minute)
	e.setClock(at)
	// The run's first PutItem is its claim of the fire.
	proxy.NextOn("PutItem", ddbfault.DropAnswer, 1)
	require.NoError(t, x.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: at}))
	require.Equal(t, 1, proxy.Faults(), "answers dropped: want the claim's")
	assert.Len(t, e.ec2.CallsOf("StartInstances"), 1, "StartInstances calls in the run whose claim answer was lost")
	// A second run for the same fire finds it done.
	require.NoError(t, x.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: at}))
	assert.Len(t, e.ec2.CallsOf("StartInstances"), 1, "StartInstances calls after a second run")
	assert.Equal(t, 1, countEntries(e.executions(t, sid)), "audit entries")
}
