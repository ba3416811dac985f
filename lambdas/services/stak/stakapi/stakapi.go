// Package stakapi is Stak's HTTP API function: package stak's handler
// with the JSON Schema implementation it checks inbox schemas and message
// bodies with (platform/bodyschema). The binding lives here, not in
// package stak, so that the stream consumer's bootstrap, which links
// package stak and validates nothing, does not link that library, whose
// package initialiser takes about 4 ms of every start (docs/functions.md,
// "Cold start").
package stakapi

import (
	"context"
	"net/http"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/bodyschema"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

// Function is the API's binding: cmd/stak runs it in Lambda.
func Function() fn.Binding { return fn.HTTP(contract.API, New) }

// Functions lists the functions bound in this package:
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{Function()} }

// New builds the HTTP API from its function's environment.
func New(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (http.Handler, error) {
	return fn.New(ctx, getenv, stak.ConfigFromEnv, (*stak.Config).SetClient, NewHandler, opts...)
}

// NewHandler is stak.NewHandler with Schemas.
func NewHandler(cfg stak.Config) http.Handler { return stak.NewHandler(cfg, Schemas()) }

// maxCached bounds the compiled schemas one execution environment keeps.
const maxCached = 64

// Schemas returns platform/bodyschema as stak.BodySchemas, with its own
// cache of compiled schemas: build it once per handler.
func Schemas() stak.BodySchemas { return &schemas{cache: &bodyschema.Cache{Max: maxCached}} }

type schemas struct {
	// cache keeps the compiled inbox schemas by their text, so a changed
	// schema compiles anew and a hot publish compiles none.
	cache *bodyschema.Cache
}

func (*schemas) CheckSchema(v *api.Validator, field string, raw []byte) {
	_, err := bodyschema.Compile(raw)
	if err == nil {
		return
	}
	if ce, ok := err.(*bodyschema.CompileError); ok && ce.Path != "" {
		v.Add(field+"."+ce.Path, "%s", ce.Message)
		return
	}
	v.Add(field, "%s", err)
}

func (s *schemas) CheckBody(v *api.Validator, field, schema string, body any) error {
	sch, err := s.cache.Get(schema)
	if err != nil {
		return err
	}
	sch.Check(v, field, body)
	return nil
}
