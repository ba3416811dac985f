package agenticpm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/eventbus"
)

// releasePerRun is how many due actions each measured run releases.
const releasePerRun = 10

// BenchmarkReleaseRun measures one run of the release job with
// releasePerRun due actions: DynamoDB requests and capacity per run and per
// action released, as docs/schemas/agenticpm.md states them against the
// minimum (see "Release job").
func BenchmarkReleaseRun(b *testing.B) {
	fake := awsloop.NewEvents(bus)
	require.NoError(b, fake.Start(), "the loopback EventBridge")
	defer fake.Close()
	var m ddbrecord.Recorder
	clock := apitest.NewClock(time.Now().UTC(), time.Millisecond)
	s := newServiceWith(b, clock.Now, func(cfg *agenticpm.Config) {
		cfg.Client = m.Client(testenv.Client(b))
		cfg.EventBus = bus
		cfg.Events = eventbus.NewEvents(awsloop.ConfigAt("AKIDBENCH", fake.URL()))
	})
	job := agenticpm.NewReleaseJobFromConfig(s.cfg)
	p := s.project(b, "")
	released := 0
	var measured ddbrecord.Recorder
	for b.Loop() {
		b.StopTimer()
		for i := range releasePerRun {
			body := fmt.Sprintf(`{"actionType":"email_sent","description":"d%d","heldUntil":%q}`, i, clock.Now().Add(agenticpm.MinHold+time.Second).Format(time.RFC3339Nano))
			s.MustRoute(b, 201, contract.RecordAction, body, nil, p.ID)
		}
		clock.Advance(agenticpm.MinHold + time.Minute)
		m.Reset()
		b.StartTimer()
		rep, err := job.RunOnce(context.Background())
		// Timed: the assertions only on the failure path.
		if err != nil || rep.Released != releasePerRun || rep.Sent != releasePerRun {
			require.NoError(b, err, "release run")
			require.Equal(b, releasePerRun, rep.Released, "release run: actions released")
			require.Equal(b, releasePerRun, rep.Sent, "release run: events sent")
		}
		released += rep.Released
		measured.Add(&m)
	}
	n := float64(b.N)
	b.ReportMetric(float64(measured.Requests())/n, "requests/run")
	b.ReportMetric(measured.Capacity()/n, "capacity/run")
	b.ReportMetric(float64(measured.Requests())/float64(released), "requests/action")
	b.Logf("%d runs, %d actions: %s; PutEvents calls %d", b.N, released, measured.String(), len(fake.CallsOf("PutEvents")))
}
