// Package agenticpmapi is AgenticPM's API function (agenticpm): package
// agenticpm's project, artefact, event, escalation, checkpoint and agent
// setting routes with the JSON Schema implementation it checks artefact
// content with (platform/bodyschema), which only this function links. The
// service's other routes are the actions API's (package eventbus, with
// EventBridge) and the credentials API's (package credentialsapi, with
// KMS): decision 22 of docs/schemas/agenticpm.md; docs/functions.md,
// "Cold start".
package agenticpmapi

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/bodyschema"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// Function is the API's binding: cmd/agenticpm runs it in Lambda.
func Function() fn.Binding { return fn.HTTP(contract.API, New) }

// Functions lists the functions bound in this package:
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{Function()} }

// New builds the API from its function's environment (agenticpm.NewConfig).
func New(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (http.Handler, error) {
	cfg, err := agenticpm.NewConfig(ctx, getenv, opts...)
	if err != nil {
		return nil, err
	}
	return NewHandler(cfg), nil
}

// NewHandler is agenticpm.NewHandler with ContentSchemas.
func NewHandler(cfg agenticpm.Config) http.Handler {
	return agenticpm.NewHandler(cfg, ContentSchemas())
}

// ContentSchemas returns platform/bodyschema as agenticpm.ContentSchemas:
// the artefact schemas of the repository (agenticpm.ArtefactSchema), each
// compiled with its formats asserted on its first use, not at init:
// compiling the four took about 3 ms (1 MB in 14,000 allocations) of every
// API cold start. A schema that does not compile fails every test
// (TestEveryArtefactSchemaCompiles) and panics on its first use.
func ContentSchemas() agenticpm.ContentSchemas { return contentSchemas{} }

type contentSchemas struct{}

func (contentSchemas) Check(v *api.Validator, field string, t agenticpm.ArtefactType, value any) {
	if compiled := artefactSchemas[t]; compiled != nil {
		compiled().Check(v, field, value)
	}
}

// artefactSchemas holds each type's compile-once function.
var artefactSchemas = func() map[agenticpm.ArtefactType]func() *bodyschema.Schema {
	out := make(map[agenticpm.ArtefactType]func() *bodyschema.Schema, len(agenticpm.ArtefactTypes))
	for _, t := range agenticpm.ArtefactTypes {
		out[t] = sync.OnceValue(func() *bodyschema.Schema {
			s, err := compileSchema(t)
			if err != nil {
				panic(err.Error())
			}
			return s
		})
	}
	return out
}()

// compileSchema compiles the schema of t.
func compileSchema(t agenticpm.ArtefactType) (*bodyschema.Schema, error) {
	b := agenticpm.ArtefactSchema(t)
	if b == nil {
		return nil, fmt.Errorf("agenticpm: artefact schema of %s: no schemas/%s.json", t, t)
	}
	s, err := bodyschema.Compile(b, bodyschema.AssertFormats())
	if err != nil {
		return nil, fmt.Errorf("agenticpm: artefact schema of %s: %w", t, err)
	}
	return s, nil
}
