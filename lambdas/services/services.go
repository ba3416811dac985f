// Package services is the registry of every dynastack function: each
// service's bindings (its contract's functions with their constructors),
// so the local runner and the tests build functions from a template's
// environment exactly as the Lambda mains build them from the process's.
// A Lambda main imports its own service package only, never this one.
package services

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	agenticpmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/catalog"
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
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/credentialsapi"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/eventbus"
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
// (services/rezagent/publisher: SNS), the APIs of Stak and AgenticPM
// (services/stak/stakapi, services/agenticpm/agenticpmapi: the JSON
// Schema library they validate with), AgenticPM's credentials API
// (services/agenticpm/credentialsapi: KMS) and its actions API and
// release job (services/agenticpm/eventbus: EventBridge). Each
// package that binds functions lists them once (its Functions); this list
// names the packages, so it changes only when a binding package is added.
func Functions() []fn.Binding {
	return slices.Concat(
		publisher.Functions(), processor.Functions(),
		nucleus.Functions(), executor.Functions(),
		stakapi.Functions(), stak.Functions(),
		itsm.Functions(),
		agenticpmapi.Functions(), eventbus.Functions(), credentialsapi.Functions())
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

// BuildAPI builds the named service's HTTP API as the stage deploys it:
// build makes each of its HTTP functions' handlers with the function's
// constructor (each function from its own environment), and Gateway
// joins them. A service of one HTTP function is that function's handler.
func BuildAPI(name string, build func(function string, ctor Constructor) (http.Handler, error)) (http.Handler, error) {
	c, ok := catalog.ServiceOf(name)
	if !ok || c.Name != name || len(c.HTTPFunctions()) == 0 {
		return nil, fmt.Errorf("services: no service %q with an HTTP API", name)
	}
	fns := c.HTTPFunctions()
	handlers := make([]http.Handler, len(fns))
	for i, f := range fns {
		ctor, ok := Lookup(f.Name)
		if !ok {
			return nil, fmt.Errorf("services: %s has no binding (list its package in Functions)", f.Name)
		}
		h, err := build(f.Name, ctor)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		handlers[i] = h
	}
	return Gateway(fns, handlers), nil
}

// Gateway routes each request to the handler of the function that serves
// its route (fns[i] by handlers[i]), as API Gateway's route integrations
// do for a service whose API several functions serve. A request of a
// known path but another method goes to the function serving that path,
// anything else to the first: their routers answer the 405 or 404 (the
// local runner's routing of one function; API Gateway answers unmatched
// requests itself). One function is its handler.
func Gateway(fns []service.Function, handlers []http.Handler) http.Handler {
	if len(fns) != len(handlers) || len(fns) == 0 {
		panic(fmt.Sprintf("services: Gateway of %d functions and %d handlers", len(fns), len(handlers)))
	}
	if len(fns) == 1 {
		return handlers[0]
	}
	g := &gateway{mux: http.NewServeMux()}
	mux := g.mux
	paths := map[string]bool{}
	for i, f := range fns {
		if rt, ok := handlers[i].(api.Routed); ok {
			g.patterns = append(g.patterns, rt.Patterns()...)
		}
		for _, r := range f.Routes {
			mux.Handle(r.Pattern(), handlers[i])
			path := strings.TrimPrefix(r.Pattern(), r.Method+" ")
			if !paths[path] {
				paths[path] = true
				mux.Handle(path, handlers[i])
			}
		}
	}
	mux.Handle("/", handlers[0])
	return g
}

// gateway is Gateway's handler: api.Routed, with every function's
// patterns, like the one function's handler it stands for.
type gateway struct {
	mux      *http.ServeMux
	patterns []string
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.mux.ServeHTTP(w, r) }

// Patterns lists the functions' patterns, function by function.
func (g *gateway) Patterns() []string { return slices.Clone(g.patterns) }

// Names lists the services with an HTTP API (BuildAPI), sorted.
func Names() []string {
	var names []string
	for _, c := range catalog.Services() {
		if len(c.HTTPFunctions()) > 0 {
			names = append(names, c.Name)
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
