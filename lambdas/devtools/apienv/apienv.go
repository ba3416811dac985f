// Package apienv builds a service's HTTP API from a template as the stage
// deploys it: each of its HTTP functions from its own environment in the
// template, joined as API Gateway's route integrations join them
// (services.BuildAPI).
package apienv

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services"
)

// Handler is the API of the service named name in tmpl, whose tables are
// tables (testenv.Tables), each function's DynamoDB requests recorded as
// its own. wrap, when not nil, changes each function's environment (a
// fault proxy's endpoint, say).
func Handler(t testing.TB, tmpl *cfntables.Template, tables map[string]string, name string, wrap func(getenv func(string) string) func(string) string) http.Handler {
	t.Helper()
	h, err := services.BuildAPI(name, func(function string, ctor services.Constructor) (http.Handler, error) {
		getenv := testenv.Getenv(t, testenv.ServiceEnv(t, tmpl, tables, function))
		if wrap != nil {
			getenv = wrap(getenv)
		}
		return ctor(t.Context(), getenv, ddbrecord.ClientOptions(getenv)...)
	})
	require.NoError(t, err, "%s API", name)
	return h
}
