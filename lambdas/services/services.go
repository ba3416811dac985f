// Package services is the registry of dynastack HTTP services. Each entry
// builds a service from a getenv, so the Lambda mains, the local runner and
// tests configure services the same way: from the environment a CDK
// template gives the function.
package services

import (
	"context"
	"net/http"
	"sort"

	"github.com/dynastack/dynastack/lambdas/services/itsm"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
)

// Constructor builds a service's handler from its environment.
type Constructor func(ctx context.Context, getenv func(string) string) (http.Handler, error)

// registry maps DYNASTACK_SERVICE values to constructors. Planned:
// rezagent, nucleus, stak, agenticpm.
var registry = map[string]Constructor{
	"itsm":     itsm.New,
	"rezagent": rezagent.New,
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
