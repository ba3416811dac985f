// Package services is the registry of every dynastack function: each
// service's bindings (its contract's functions with their constructors),
// so the local runner and the tests build functions from a template's
// environment exactly as the Lambda mains build them from the process's.
// A Lambda main imports its own service package only, never this one.
package services

import (
	"context"
	"net/http"
	"slices"
	"sort"

	agenticpmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezagentcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/agenticpmapi"
	"github.com/dynastack/dynastack/lambdas/services/itsm"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/dynastack/dynastack/lambdas/services/nucleus/executor"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/processor"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/publisher"
	"github.com/dynastack/dynastack/lambdas/services/stak"
	"github.com/dynastack/dynastack/lambdas/services/stak/stakapi"
)

// Functions lists every binding, service by service. A function that
// alone calls an AWS service or links a costly library has its binding in
// a package of its own, with what only it uses, so that the other
// functions' bootstraps do not link it: Nucleus's executor
// (services/nucleus/executor: the EC2, RDS and ECS clients), rez_agent's
// processor (services/rezagent/processor: SSM) and its API and scheduler
// (services/rezagent/publisher: SNS), and the APIs of Stak and AgenticPM
// (services/stak/stakapi, services/agenticpm/agenticpmapi: the JSON
// Schema library they validate with, and AgenticPM's KMS client). Each
// package that binds functions lists them once (its Functions); this list
// names the packages, so it changes only when a binding package is added.
func Functions() []fn.Binding {
	return slices.Concat(
		publisher.Functions(), processor.Functions(),
		nucleus.Functions(), executor.Functions(),
		stakapi.Functions(), stak.Functions(),
		itsm.Functions(),
		agenticpmapi.Functions(), agenticpm.Functions())
}

// Binding returns the binding of the function named name.
func Binding(name string) (fn.Binding, bool) {
	for _, b := range Functions() {
		if b.Function.Name == name {
			return b, true
		}
	}
	return fn.Binding{}, false
}

// Constructor builds an HTTP function's handler from its environment.
type Constructor func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (http.Handler, error)

// lookup returns name's constructor when the function is of kind k.
func lookup[T any](name string, k service.Kind) (func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (T, error), bool) {
	b, ok := Binding(name)
	if !ok || b.Function.Kind != k {
		return nil, false
	}
	return func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (T, error) {
		v, err := b.Build(ctx, getenv, opts...)
		if err != nil {
			var zero T
			return zero, err
		}
		return v.(T), nil
	}, true
}

// Lookup returns the constructor of the named HTTP function.
func Lookup(name string) (Constructor, bool) { return lookup[http.Handler](name, service.HTTP) }

// LookupJob returns the constructor of the named scheduled function.
func LookupJob(name string) (fn.JobConstructor, bool) {
	return lookup[fn.Job](name, service.Schedule)
}

// LookupQueueConsumer returns the constructor of the named queue consumer.
func LookupQueueConsumer(name string) (fn.QueueConstructor, bool) {
	return lookup[fn.QueueConsumer](name, service.Queue)
}

// LookupConsumer returns the constructor of the named stream consumer.
func LookupConsumer(name string) (fn.StreamConstructor, bool) {
	return lookup[fn.StreamConsumer](name, service.Stream)
}

// Names lists the HTTP functions, sorted.
func Names() []string {
	var names []string
	for _, b := range Functions() {
		if b.Function.Kind == service.HTTP {
			names = append(names, b.Function.Name)
		}
	}
	sort.Strings(names)
	return names
}

// Operations are the routes of every service's HTTP API described for its
// OpenAPI document (lambdas/devtools/openapi), by the contract's name.
func Operations() map[string][]api.Operation {
	return map[string][]api.Operation{
		rezagentcontract.Name:  rezagent.Operations(),
		nucleuscontract.Name:   nucleus.Operations(),
		stakcontract.Name:      stak.Operations(),
		itsmcontract.Name:      itsm.Operations(),
		agenticpmcontract.Name: agenticpm.Operations(),
	}
}
