// Command local runs every dynastack service on one port against DynamoDB
// Local, configured from the CDK templates exactly as the Lambda functions
// are in AWS:
//
//	go run ./devtools/cmd/local                         # cdk.out/assembly-dev
//	go run ./devtools/cmd/local -templates ../test/snapshots/dev
//
//	go run ./devtools/cmd/local token -tenant acme -user u1   # an end-user token
//
// It creates the tables of every *.template.json in the directory, then
// mounts each function whose environment has DYNASTACK_SERVICE=<name> at
// /<name>/ with that environment (table Refs resolved to the local tables).
// Routes behind a JWT authorizer in the template (Stak's end-user routes)
// take only a token signed with the local key (.dev/token-key.pem, made on
// first use) for the authorizer's issuer and audience, as API Gateway
// takes only the identity provider's; `token` mints one.
// DynamoDB Local is started unless AWS_ENDPOINT_URL_DYNAMODB is set;
// the functions reach it through a fault proxy (devtools/ddbfault):
// FAULTS=throttle:0.2 (or 5xx:…, drop:…, garbage:…, latency:…:<delay>),
// or POST /_local/faults, puts DynamoDB's own faults between them. The
// templates' CloudWatch alarms are evaluated against the metrics the
// runner collects (alarms.go; LOCAL_ALARM_PERIOD scales their periods;
// GET /_local/alarms). One line on
// stdout announces readiness; logs go to stderr. SIGINT/SIGTERM stop the
// server and DynamoDB Local.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/localcors"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/services"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "token" {
		if err := runToken(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "token:", err)
			os.Exit(2)
		}
		return
	}
	templates := flag.String("templates", "", "directory of *.template.json (default <repo>/cdk.out/assembly-dev)")
	addr := flag.String("addr", "127.0.0.1:8080", "listen address; PORT overrides the port")
	verbose := flag.Bool("v", false, "pass DynamoDB Local's output through to stderr")
	reload := flag.Bool("reload", false, "rebuild and restart the functions on a saved change, keeping DynamoDB Local and its data (reload.go)")
	src := flag.String("src", "", "with -reload: the repository root to watch and build (default: the one holding the working directory)")
	synth := flag.String("synth", "", "with -reload: shell command that re-synthesizes the templates on an infra change (make dev passes its cdk synth)")
	flag.Parse()

	// The log is also read by the alarms: the functions' EMF lines are
	// their metrics (alarms.go).
	al, err := newAlarms()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log := logx.New(io.MultiWriter(os.Stderr, al), slog.LevelInfo)
	al.log = log
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	serve := func() error { return run(ctx, log, al, *templates, listenAddr(*addr, os.Getenv("PORT")), *verbose) }
	if *reload {
		serve = func() error {
			return supervise(ctx, log, *templates, listenAddr(*addr, os.Getenv("PORT")), *src, *synth, *verbose)
		}
	}
	if err := serve(); err != nil {
		log.Error("local runner failed", "error", err.Error())
		os.Exit(1)
	}
}

func listenAddr(addr, port string) string {
	if port == "" {
		return addr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

func run(ctx context.Context, log *slog.Logger, al *alarms, dir, addr string, verbose bool) error {
	dir, err := templateDir(dir)
	if err != nil {
		return err
	}
	// Templates first: a wrong directory should fail before java starts.
	tmpls, err := cfntables.LoadDir(dir)
	if err != nil {
		return err
	}

	// The port first: a busy one should fail before java starts.
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	defer ln.Close()

	external := os.Getenv(ddblocal.EnvEndpoint) != ""
	endpoint, stopDynamo, err := dynamoEndpoint(ctx, log, verbose)
	if err != nil {
		return err
	}
	defer stopDynamo()
	// With DYNASTACK_CALLS_DIR set (the devtools/cmd/local tests under make
	// test), every DynamoDB request a function makes is recorded for
	// test/iamcalls, as in testenv.Main: each constructor is given
	// ddbrecord.ClientOptions.
	stopCalls, err := ddbrecord.StartCallLog(os.Getenv)
	if err != nil {
		return err
	}
	defer stopCalls()
	client, err := ddb.NewClient(ctx, ddblocal.WithEndpoint(endpoint, os.Getenv))
	if err != nil {
		return err
	}
	wk, err := newWorkers(log, "http://"+ln.Addr().String(), al)
	if err != nil {
		return err
	}
	defer wk.close()
	// The functions reach DynamoDB Local through a fault proxy: with
	// FAULTS set (or POST /_local/faults) it throttles, fails, slows or
	// drops answers at the given rate, and the throttles and server errors
	// it answers are DynamoDB's metrics for the alarms (the runner's own
	// table setup goes straight).
	proxy, err := ddbfault.Start(endpoint)
	if err != nil {
		return err
	}
	defer proxy.Close()
	proxy.Observe(al.dynamo)
	fnEndpoint := proxy.URL
	if v := os.Getenv(ddbfault.EnvFaults); v != "" {
		fault, rate, delay, err := ddbfault.ParseSpec(v)
		if err != nil {
			return err
		}
		proxy.Set(fault, rate)
		proxy.SetDelay(delay)
		log.Warn("functions reach DynamoDB through a fault proxy", "fault", fault, "rate", rate, "proxy", proxy.URL)
	}
	// fnGetenv is a function's getenv: its template environment, the
	// local endpoints, then the runner's own environment.
	fnGetenv := func(fnEnv map[string]string) func(string) string {
		for k, v := range wk.env() {
			fnEnv[k] = v
		}
		return ddblocal.WithEndpoint(fnEndpoint, overlay(fnEnv, os.Getenv))
	}

	mux := http.NewServeMux()
	mountOpenAPI(mux)
	mounted := map[string]string{} // service → template
	defined := map[string]string{} // API function → template
	consuming := 0                 // stream consumers started
	working := 0                   // scheduled jobs and queue consumers
	// handlers are what the index pages list (index.go).
	handlers := map[string]http.Handler{}
	for _, t := range tmpls {
		names, err := cfntables.Create(ctx, client, t, cfntables.Options{KeepExisting: external, Suffix: os.Getenv(EnvTableSuffix)})
		if err != nil {
			return err
		}
		if err := al.addTemplate(t, names); err != nil {
			return err
		}
		if err := ddbrecord.LogTables(t, names); err != nil {
			return err
		}
		fns, err := t.Functions()
		if err != nil {
			return err
		}
		if err := wk.addTemplate(t); err != nil {
			return err
		}
		names = t.LocalRefs(names)
		served := 0
		// The template's HTTP functions by name, joined into its API below:
		// as invoked (timeout, concurrency, metrics) and as built.
		invoked, built := map[string]http.Handler{}, map[string]http.Handler{}
		var apiService service.Contract // the service they belong to
		for _, fn := range fns {
			name := fn.Service()
			if name == "" {
				continue
			}
			b, ok := services.Binding(name)
			if !ok {
				log.Warn("skipping function of unknown service", "template", t.Stack, "function", fn.LogicalID, "service", name, "known", services.Names())
				continue
			}
			// As fn.Main does in Lambda, the default logger carries the
			// function's name while it is built: what the constructor keeps
			// of slog.Default names it in every line, and an EMF line's
			// "service" dimension is that attribute (the alarms read it).
			slog.SetDefault(log.With("service", name))
			fnEnv, err := fn.Environment(names)
			if err != nil {
				return err
			}
			getenv := fnGetenv(fnEnv)
			served++
			switch b.Function.Kind {
			case service.Stream:
				cons, _ := services.LookupConsumer(name)
				m, err := startConsumer(ctx, log, al, cons, t, fn, names, client, getenv, wk.queueOf(t))
				if err != nil {
					return fmt.Errorf("stream consumer %s: %w", name, err)
				}
				wk.addMapping(fn.Service(), m)
				consuming++
				continue
			case service.Schedule:
				job, _ := services.LookupJob(name)
				if err := wk.addJob(ctx, t, fn, job, getenv); err != nil {
					return fmt.Errorf("scheduled job %s: %w", name, err)
				}
				working++
				continue
			case service.Queue:
				qc, _ := services.LookupQueueConsumer(name)
				if err := wk.addQueueConsumer(ctx, t, fn, qc, getenv); err != nil {
					return fmt.Errorf("queue consumer %s: %w", name, err)
				}
				working++
				continue
			}
			if prev, dup := defined[name]; dup {
				return fmt.Errorf("API function %s is defined by both %s and %s", name, prev, t.Path)
			}
			defined[name] = t.Path
			ctor, _ := services.Lookup(name)
			h, err := ctor(ctx, getenv, ddbrecord.ClientOptions(getenv)...)
			if err != nil {
				return fmt.Errorf("service %s: %w", name, err)
			}
			local := localName(t, fn.LogicalID)
			invoke := withTimeout(name, fn.Timeout, log, h, func(start time.Time, failed bool) { al.invocation(local, start, failed) })
			apiService, _ = catalog.ServiceOf(name)
			invoked[name] = withConcurrency(reservedConcurrency(t, fn.LogicalID), local, al, log, invoke)
			built[name] = h
		}
		if len(invoked) > 0 {
			// The template's API: each route to its function, as its
			// integrations send them (services.Gateway, in the contract's
			// order of functions), behind the API's authorizers, metrics
			// and CORS; served at /<service>/.
			name := apiService.Name
			var apiFns []service.Function
			var apiHandlers, apiRaw []http.Handler
			for _, f := range apiService.HTTPFunctions() {
				if h, ok := invoked[f.Name]; ok {
					apiFns, apiHandlers, apiRaw = append(apiFns, f), append(apiHandlers, h), append(apiRaw, built[f.Name])
				}
			}
			if prev, dup := mounted[name]; dup {
				return fmt.Errorf("service %s is defined by both %s and %s", name, prev, t.Path)
			}
			guarded, tokenRoutes, err := guard(t, services.Gateway(apiFns, apiHandlers))
			if err != nil {
				return fmt.Errorf("service %s: %w", name, err)
			}
			if len(tokenRoutes) > 0 {
				log.Info("end-user routes take a token of the local key (make token TENANT=… USER=…)", "service", name, "routes", tokenRoutes)
			}
			cors, err := t.CORS()
			if err != nil {
				return fmt.Errorf("service %s: %w", name, err)
			}
			mux.Handle("/"+name+"/", http.StripPrefix("/"+name, al.apiMetrics(localName(t, apiOf(t)), localcors.Handler(cors, guarded))))
			mounted[name] = t.Path
			handlers[name] = services.Gateway(apiFns, apiRaw)
		}
		slog.SetDefault(log)
		if served == 0 {
			log.Info("template has no service function yet; tables created, nothing served", "template", t.Stack, "tables", names)
		}
	}
	if len(mounted) == 0 && consuming == 0 && working == 0 {
		return fmt.Errorf("no function with %s in %s", service.EnvFunction, dir)
	}
	svcNames := make([]string, 0, len(mounted))
	for n := range mounted {
		svcNames = append(svcNames, n)
	}
	sort.Strings(svcNames)
	mountIndex(mux, handlers)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "services": svcNames, "dynamodb": endpoint})
	})

	wk.mount(mux)
	al.mount(mux)
	mountFaults(mux, proxy, log)
	wk.start(ctx)
	go al.run(ctx)
	server := newServer(mux, log)
	serveErr := make(chan error, 1)
	go func() { serveErr <- server.Serve(ln) }()

	base := "http://" + ln.Addr().String()
	urls := make([]string, len(svcNames))
	for i, n := range svcNames {
		urls[i] = n + "=" + base + "/" + n + "/"
	}
	fmt.Printf("dynastack local ready on %s: %s (dynamodb %s)\n", base, strings.Join(urls, " "), endpoint)
	if line := wk.describe(base); line != "" {
		fmt.Println(line)
	}

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// templateDir is dir, or the dev stage's assembly of the repository.
func templateDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "cdk.out", "assembly-dev"), nil
}

func repoRoot() (string, error) { return repo.Root("") }

// dynamoEndpoint is AWS_ENDPOINT_URL_DYNAMODB when set, otherwise a
// DynamoDB Local it starts (stop ends it).
func dynamoEndpoint(ctx context.Context, log *slog.Logger, verbose bool) (endpoint string, stop func(), err error) {
	if endpoint := os.Getenv(ddblocal.EnvEndpoint); endpoint != "" {
		return endpoint, func() {}, nil
	}
	var out io.Writer
	if verbose {
		out = os.Stderr
	}
	log.Info("starting dynamodb local (java; a few seconds)")
	srv, err := ddblocal.Start(ctx, ddblocal.Options{Output: out})
	if err != nil {
		return "", nil, err
	}
	log.Info("dynamodb local started", "endpoint", srv.Endpoint, "pid", srv.PID())
	return srv.Endpoint, func() { srv.Close() }, nil
}

// overlay reads env first and getenv for the rest: a function's template
// environment over the runner's own.
func overlay(env map[string]string, getenv func(string) string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return getenv(k)
	}
}
