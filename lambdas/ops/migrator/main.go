// Command migrator runs a service's data migrations against a stage's
// tables (`make migrate STAGE=… SERVICE=… [DRY_RUN=1] [CHECK=1] [ID=…]`;
// docs/migrations.md). The tables are the stage's: their names are read
// from the stage's golden template (test/snapshots/<stage>/<service>
// .template.json, what infra/config synthesizes), unless the contract's
// variable (AGENTICPM_TABLE, …) is set, as for DynamoDB Local. It needs
// AWS credentials for the stage (or AWS_ENDPOINT_URL_DYNAMODB for DynamoDB
// Local); without them it says so in one line and exits 2.
//
// Flags: -stage, -service, -dry-run, -check, -only <migration id>,
// -read-units, -write-units, -segments, -templates, -reports.
//
// Exit codes: 0 done (or, with -check, nothing needed); 1 a migration
// failed or stopped (run again to resume), or -check found one needed or
// in progress; 2
// bad input or no credentials.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	agenticpmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/catalog"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezagentcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/ops/migrate"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	agenticpm "github.com/dynastack/dynastack/lambdas/services/agenticpm/migrations"
	itsm "github.com/dynastack/dynastack/lambdas/services/itsm/migrations"
	nucleus "github.com/dynastack/dynastack/lambdas/services/nucleus/migrations"
	rezagent "github.com/dynastack/dynastack/lambdas/services/rezagent/migrations"
)

// Registry is every service's migrations, by the contract's name. A
// service without any (Stak: its document's table never ran before
// dynastack) is listed with none.
func Registry() map[string][]migrate.Migration {
	return map[string][]migrate.Migration{
		agenticpmcontract.Name: agenticpm.Migrations(),
		itsmcontract.Name:      itsm.Migrations(),
		nucleuscontract.Name:   nucleus.Migrations(),
		rezagentcontract.Name:  rezagent.Migrations(),
		stakcontract.Name:      nil,
	}
}

type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, "migrate:", ee.msg)
		}
		os.Exit(ee.code)
	default:
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stage := fs.String("stage", "", "stage (dev, stage, prod)")
	svc := fs.String("service", "", "service (agenticpm, itsm, nucleus, rezagent, stak)")
	templates := fs.String("templates", "test/snapshots", "directory of the stages' templates")
	dry := fs.Bool("dry-run", false, "count and show samples, write nothing")
	check := fs.Bool("check", false, "pre-flight: read a sample, say which migrations it needs")
	sample := fs.Int("sample", 1000, "items the pre-flight reads per table")
	only := fs.String("only", "", "run only this migration (the earlier ones must be done)")
	rcu := fs.Float64("read-units", 50, "read capacity units per second at most")
	wcu := fs.Float64("write-units", 25, "write capacity units per second at most")
	segments := fs.Int("segments", 4, "parallel scan segments")
	reports := fs.String("reports", "cdk.out/migrate", "directory of the reports (mode 0600: Nucleus's hold new external ids)")
	if err := fs.Parse(args); err != nil {
		return &exitError{code: 2}
	}
	reg := Registry()
	c, ok := contractOf(*svc)
	migs, known := reg[*svc]
	if !ok || !known {
		return &exitError{2, fmt.Sprintf("unknown service %q; services: %s", *svc, strings.Join(names(), ", "))}
	}
	if *stage == "" || strings.ContainsAny(*stage, "/.") {
		return &exitError{2, fmt.Sprintf("stage %q: give the stage (dev, stage, prod)", *stage)}
	}
	if len(migs) == 0 {
		fmt.Fprintf(stdout, "%s has no migrations\n", *svc)
		return nil
	}
	tables, err := tableNames(*templates, *stage, c, getenv)
	if err != nil {
		return &exitError{2, err.Error()}
	}
	cfg, err := awsconf.Load(ctx, getenv, dynamodb.ServiceID)
	if err == nil {
		_, err = cfg.Credentials.Retrieve(ctx)
	}
	if err != nil {
		return &exitError{2, fmt.Sprintf("no AWS credentials for stage %s (eval \"$(aws configure export-credentials --format env)\", or AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local): %v", *stage, oneLine(err))}
	}
	client, err := ddb.NewClient(ctx, getenv, migrate.NoRetries)
	if err != nil {
		return &exitError{2, err.Error()}
	}
	out := stdout
	if !*dry && !*check {
		if err := os.MkdirAll(*reports, 0o700); err != nil {
			return err
		}
		path := filepath.Join(*reports, fmt.Sprintf("%s-%s.report", *stage, *svc))
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(stdout, "migrate: report in %s\n", path)
		out = io.MultiWriter(stdout, f)
	}
	mc := migrate.Config{Client: client, Stage: *stage, Tables: tables, Only: *only, DryRun: *dry, Segments: *segments,
		ReadUnits: *rcu, WriteUnits: *wcu, Out: out, Progress: stderr}
	if *check {
		needs, err := migrate.Preflight(ctx, mc, migs, *sample)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(needs, migrate.Need.Pending) {
			return &exitError{1, "the sample needs migrations: make migrate STAGE=" + *stage + " SERVICE=" + *svc + " DRY_RUN=1, then without DRY_RUN"}
		}
		return nil
	}
	_, err = migrate.Run(ctx, mc, migs)
	return err
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

func names() []string {
	var out []string
	for _, c := range catalog.Services() {
		out = append(out, c.Name)
	}
	return out
}

func contractOf(name string) (service.Contract, bool) {
	for _, c := range catalog.Services() {
		if c.Name == name {
			return c, true
		}
	}
	return service.Contract{}, false
}

// tableNames maps each table variable of the contract to the stage's
// physical name: the variable from the environment when set, else the
// TableName of the resource the stage template's functions get in it.
func tableNames(dir, stage string, c service.Contract, getenv func(string) string) (map[string]string, error) {
	out := map[string]string{}
	missing := false
	for _, t := range c.Tables {
		if v := getenv(t.Env); v != "" {
			out[t.Env] = v
		} else {
			missing = true
		}
	}
	if !missing {
		return out, nil
	}
	path := filepath.Join(dir, stage, c.Name+".template.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no template for stage %s: %v (a stage's tables are named by its golden template; or set %s)", stage, err, c.Tables[0].Env)
	}
	var tmpl struct {
		Resources map[string]struct {
			Type       string
			Properties json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &tmpl); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for _, r := range tmpl.Resources {
		if r.Type != "AWS::Lambda::Function" {
			continue
		}
		var p struct {
			Environment struct{ Variables map[string]json.RawMessage }
		}
		_ = json.Unmarshal(r.Properties, &p)
		for _, t := range c.Tables {
			var ref struct{ Ref string }
			if raw, ok := p.Environment.Variables[t.Env]; ok && out[t.Env] == "" && json.Unmarshal(raw, &ref) == nil && ref.Ref != "" {
				var tp struct{ TableName string }
				_ = json.Unmarshal(tmpl.Resources[ref.Ref].Properties, &tp)
				if tp.TableName != "" {
					out[t.Env] = tp.TableName
				}
			}
		}
	}
	for _, t := range c.Tables {
		if out[t.Env] == "" {
			return nil, fmt.Errorf("%s: no function gets %s with a table's name", path, t.Env)
		}
	}
	return out, nil
}
