// The preamble every dynastack function shares: reading
// its required variables, building it from the environment with a DynamoDB
// client (what every function's constructor does, in Lambda, the local
// runner and the tests alike), and the defaults of its handler. A service's
// http.go then holds only what is its own: its variables, its Config and
// its routes.

package fn

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dynastack/dynastack/constructs/service"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Var is an environment variable a service requires.
type Var struct {
	// Name is the variable, e.g. ITSM_TICKETS_TABLE.
	Name string
	// Names says what its value names, for the error when it is unset,
	// e.g. "poc-itsm-tickets-<stage>".
	Names string
}

// Required returns the value of each of vars read with getenv, in order.
// When any is unset, the error names every unset variable and what it
// names, so one failed deployment shows all that is missing.
func Required(service string, getenv func(string) string, vars ...Var) ([]string, error) {
	vals := make([]string, len(vars))
	var missing []string
	for i, v := range vars {
		if vals[i] = getenv(v.Name); vals[i] == "" {
			missing = append(missing, v.Name+" ("+v.Names+")")
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: not set: %s", service, strings.Join(missing, ", "))
	}
	return vals, nil
}

// Tables reads the physical names of a service's tables from getenv, under
// the variables its contract names (every missing one named at once, with
// what it names), and the Common holding the cursor key they seed:
// DYNASTACK_CURSOR_KEY, else derived from the service and table names.
func Tables(service string, getenv func(string) string, tables ...service.Table) ([]string, Common, error) {
	vars := make([]Var, len(tables))
	for i, t := range tables {
		vars[i] = Var{Name: t.Env, Names: t.BaseName + "-<stage>"}
	}
	names, err := Required(service, getenv, vars...)
	if err != nil {
		return nil, Common{}, err
	}
	seed := "dynastack/" + service + "/cursor/" + strings.Join(names, "/")
	return names, Common{CursorKey: ddb.CursorKeyFromEnv(getenv, seed)}, nil
}

// New builds a service from the environment: its configuration
// (configFromEnv), a DynamoDB client (ddb.NewClient with opts, so
// AWS_ENDPOINT_URL_DYNAMODB and AWS_REGION apply), then build. setClient
// puts the client into the configuration. A configuration error comes
// before any client is made.
func New[C, S any](ctx context.Context, getenv func(string) string,
	configFromEnv func(func(string) string) (C, error), setClient func(*C, ddb.API), build func(C) S, opts ...ddb.Option) (S, error) {
	var zero S
	cfg, err := configFromEnv(getenv)
	if err != nil {
		return zero, err
	}
	client, err := ddb.NewClient(ctx, getenv, opts...)
	if err != nil {
		return zero, err
	}
	setClient(&cfg, client)
	return build(cfg), nil
}

// Common is the part of every service's Config that is not the service's
// own: its client, its cursor key, and what tests pin. A service's Config
// embeds it.
type Common struct {
	// CursorKey signs list cursors (ConfigFromEnv sets it: DYNASTACK_CURSOR_KEY
	// or a key derived from the table names).
	CursorKey []byte
	// Client is required; New sets it from the environment.
	Client ddb.API
	// Logger defaults to slog.Default (the mains install a logx logger).
	Logger *slog.Logger
	// Now and NewID default to time.Now and random ids; tests pin them.
	Now   func() time.Time
	NewID func() string
}

// Pin sets a store's clock and id source to the ones a test pinned in the
// Config, and leaves the store's defaults otherwise (newID may be nil).
func (c Common) Pin(now *func() time.Time, newID *func() string) {
	if c.Now != nil {
		*now = c.Now
	}
	if newID != nil && c.NewID != nil {
		*newID = c.NewID
	}
}

// SetClient puts the client New made into the configuration.
func (c *Common) SetClient(client ddb.API) { c.Client = client }

// Same is a build step that keeps the configuration as it is, for a
// constructor that finishes the build itself (one that can fail).
func Same[C any](c C) C { return c }

// Logger checks the client of a service's handler (a nil client is a
// programming error, so it panics at construction rather than at the first
// request) and returns log, or slog.Default with the service's name when
// log is nil.
func Logger(service string, client ddb.API, log *slog.Logger) *slog.Logger {
	if client == nil {
		panic(service + ": Config.Client is nil")
	}
	if log == nil {
		log = slog.Default().With("service", service)
	}
	return log
}
