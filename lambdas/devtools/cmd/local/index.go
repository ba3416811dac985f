package main

import (
	"net/http"
	"sort"
	"strings"

	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// serviceIndex is one service in the runner's index pages.
type serviceIndex struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Routes are the service's router patterns with the runner's prefix,
	// e.g. "GET /itsm/tickets/{id}": what API Gateway forwards in AWS.
	Routes []string `json:"routes"`
}

// mountIndex answers GET / with every served service and its routes, and
// GET /<service>/ with that service's routes, so the URLs of the ready line
// lead somewhere instead of to a 404. A service that routes its own root
// keeps it.
func mountIndex(mux *http.ServeMux, handlers map[string]http.Handler) {
	names := make([]string, 0, len(handlers))
	for n := range handlers {
		names = append(names, n)
	}
	sort.Strings(names)
	routes := make(map[string][]string, len(names))
	for _, n := range names {
		routes[n] = []string{}
		if rt, ok := handlers[n].(api.Routed); ok {
			for _, p := range rt.Patterns() {
				method, path, found := strings.Cut(p, " ")
				if !found {
					method, path = "", p
				}
				routes[n] = append(routes[n], strings.TrimSpace(method+" /"+n+path))
			}
		}
	}
	index := func(r *http.Request, n string) serviceIndex {
		return serviceIndex{Name: n, URL: "http://" + r.Host + "/" + n + "/", Routes: routes[n]}
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		out := make([]serviceIndex, len(names))
		for i, n := range names {
			out[i] = index(r, n)
		}
		api.WriteJSON(w, http.StatusOK, map[string]any{"services": out})
	})
	for _, n := range names {
		if ownsRoot(routes[n], n) {
			continue
		}
		mux.HandleFunc("GET /"+n+"/{$}", func(w http.ResponseWriter, r *http.Request) {
			api.WriteJSON(w, http.StatusOK, index(r, n))
		})
	}
}

func ownsRoot(routes []string, name string) bool {
	for _, r := range routes {
		_, path, _ := strings.Cut(r, " ")
		if path == "/"+name+"/" || path == "/"+name+"/{$}" {
			return true
		}
	}
	return false
}
