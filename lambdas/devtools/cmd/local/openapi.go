package main

import (
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/lambdas/devtools/openapi"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services"
)

// OpenAPIPrefix is where the runner serves each service's OpenAPI
// document: GET /_local/openapi/<service>.json, built from the running
// code (the committed docs/api/<service>.openapi.json is the same while it
// is fresh), with the runner's prefix of the service as its server.
const OpenAPIPrefix = "/_local/openapi/"

func mountOpenAPI(mux *http.ServeMux) {
	mux.HandleFunc("GET "+OpenAPIPrefix+"{file}", func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutSuffix(r.PathValue("file"), ".json")
		for _, c := range catalog.Services() {
			if !ok || c.Name != name {
				continue
			}
			doc, err := openapi.Document(c, services.Operations()[c.Name])
			if err != nil {
				api.WriteError(w, r, err)
				return
			}
			doc.Servers = openapi3.Servers{{URL: "/" + c.Name, Description: "make dev"}}
			b, err := openapi.Marshal(doc)
			if err != nil {
				api.WriteError(w, r, err)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
			return
		}
		api.WriteError(w, r, api.NotFound("no OpenAPI document %q; one of %s<service>.json", api.Truncate(r.PathValue("file"), 64), OpenAPIPrefix))
	})
}
