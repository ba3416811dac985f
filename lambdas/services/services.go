// Package services is the registry of dynastack HTTP services. Each entry
// builds a service from a getenv, so the Lambda mains, the local runner and
// tests configure services the same way: from the environment a CDK
// template gives the function.
package services

import (
	"context"
	"net/http"
	"sort"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/queue"
	"github.com/dynastack/dynastack/lambdas/platform/schedule"
	"github.com/dynastack/dynastack/lambdas/platform/streams"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

// Constructor builds a service's handler from its environment.
type Constructor func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (http.Handler, error)

// registry maps DYNASTACK_SERVICE values to constructors.
var registry = map[string]Constructor{
	"agenticpm": agenticpm.New,
	"itsm":      itsm.New,
	"nucleus":   nucleus.New,
	"rezagent":  rezagent.New,
	"stak":      stak.New,
}

// consumers maps the DYNASTACK_SERVICE values of stream consumer functions
// to their constructors; Lambda runs them through cmd/<name>, the local
// runner through devtools/poller.
var consumers = map[string]streams.Constructor{
	"stak-stream": func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (streams.Consumer, error) {
		return stak.NewConsumer(ctx, getenv, opts...)
	},
}

// jobs maps the DYNASTACK_SERVICE values of scheduled functions to their
// constructors; Lambda runs them through schedule.Main in cmd/<name>, the
// local runner on a local rate.
var jobs = map[string]schedule.Constructor{
	"nucleus-executor":       nucleus.NewExecutor,
	"rezagent-scheduler":     rezagent.NewScheduler,
	agenticpm.ReleaseService: agenticpm.NewReleaseJob,
}

// queueConsumers maps the DYNASTACK_SERVICE values of SQS-driven functions
// to their constructors; the local runner feeds them from its emulated
// queues.
var queueConsumers = map[string]queue.Constructor{
	"rezagent-processor": rezagent.NewProcessor,
}

// LookupQueueConsumer returns the constructor of the named queue consumer.
func LookupQueueConsumer(name string) (queue.Constructor, bool) {
	c, ok := queueConsumers[name]
	return c, ok
}

// LookupJob returns the constructor of the named scheduled job.
func LookupJob(name string) (schedule.Constructor, bool) {
	c, ok := jobs[name]
	return c, ok
}

// LookupConsumer returns the constructor of the named stream consumer.
func LookupConsumer(name string) (streams.Constructor, bool) {
	c, ok := consumers[name]
	return c, ok
}

// Lookup returns the constructor of the named service.
func Lookup(name string) (Constructor, bool) {
	c, ok := registry[name]
	return c, ok
}

// Names lists the registered services, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
