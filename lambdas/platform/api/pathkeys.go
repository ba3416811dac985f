package api

import (
	"strings"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/ids"
)

// Every path parameter of every route is a key (ids.CheckKey; a greedy
// {x+} one ids.CheckGreedyKey), checked by the Router before its handler
// runs: a 400 validation_failed naming the parameter.

// pathParam is one {name} or greedy {name+} of a route's path.
type pathParam struct {
	name   service.PathParam
	greedy bool
}

// pathParams are the route's parameters; only the last can be greedy.
func pathParams(route service.Route) []pathParam {
	var out []pathParam
	for _, p := range route.Params() {
		out = append(out, pathParam{name: p})
	}
	if len(out) > 0 && strings.HasSuffix(route.Path, "+}") {
		out[len(out)-1].greedy = true
	}
	return out
}

// checkPath records on v every path parameter of r that is not a key.
func checkPath(v *Validator, r interface{ PathValue(string) string }, params []pathParam) {
	for _, p := range params {
		s := r.PathValue(string(p.name))
		var msg string
		if p.greedy {
			msg = ids.CheckGreedyKey(s)
		} else {
			msg = ids.CheckKey(s, ids.MaxKeyBytes)
		}
		if msg != "" {
			v.Add(string(p.name), "path parameter %s", msg)
		}
	}
}
