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
	if err != nil {
		t.Fatal(err)
	}
	at := fire.Add(time.Minute)
	e.setClock(at)
	// The run's first PutItem is its claim of the fire.
	proxy.NextOn("PutItem", ddbfault.DropAnswer, 1)
	if err := x.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: at}); err != nil {
		t.Fatal(err)
	}
	if proxy.Faults() != 1 {
		t.Fatalf("%d answers dropped, want the claim's", proxy.Faults())
	}
	if n := len(e.ec2.CallsOf("StartInstances")); n != 1 {
		t.Errorf("%d StartInstances calls in the run whose claim answer was lost, want 1", n)
	}
	// A second run for the same fire finds it done.
	if err := x.Run(context.Background(), fn.ScheduleEvent{ScheduledTime: at}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.ec2.CallsOf("StartInstances")); n != 1 {
		t.Errorf("%d StartInstances calls after a second run, want 1", n)
	}
	if ex := e.executions(t, sid); countEntries(ex) != 1 {
		t.Errorf("%d audit entries, want 1", countEntries(ex))
	}
}
