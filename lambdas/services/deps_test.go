package services_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"

	agenticpm "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/catalog"
	nucleus "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezagent "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stak "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The boundary between what deploys and what serves development is the
// folder: everything under devtools/ (tests' harnesses, the local runner,
// loopback fakes) is dev-only, everything else is runtime. A runtime
// package that imported a dev-only one would carry its dependencies (the
// DynamoDB Streams client, a java launcher, template parsing) into every
// cold start; tests may import them, so only non-test imports count.
const (
	module  = "github.com/dynastack/dynastack/lambdas"
	devTree = module + "/devtools/"
	// opsTree holds the operator tools (stak-replay) and what only they
	// and the dev tools use: run by a person against a stage, never
	// deployed, so the runtime (platform, services, cmd) never imports it.
	opsTree = module + "/ops/"
	// migrationsPkg ends the path of a service's data migrations
	// (services/<name>/migrations): operator code that lives beside the
	// service it changes, so it counts as ops/ (it imports ops/migrate),
	// and no Lambda main may link it.
	migrationsPkg = "/migrations"
)

// isOps tells the operator tools' packages, and the services' migrations.
func isOps(importPath string) bool {
	return strings.HasPrefix(importPath+"/", opsTree) ||
		strings.HasPrefix(importPath, module+"/services/") && strings.HasSuffix(importPath, migrationsPkg)
}

// lambdaMainBans are what no Lambda main may link, wherever it comes
// from: the test framework.
var lambdaMainBans = []string{"testing"}

// sdkService prefixes the AWS SDK's service clients' import paths.
const sdkService = "github.com/aws/aws-sdk-go-v2/service/"

// sdkClients are the AWS SDK service clients the functions call (the
// package below sdkService), each with the functions that call it: a
// Lambda main links exactly the clients of its function. An SDK service
// package's initialiser (its schemas and endpoint rules) runs at every
// cold start of a binary that imports it, whether or not the function
// calls it (0.2–3 ms each), so a client only some functions call is
// imported by the package of their binding: services/nucleus/executor,
// services/rezagent/publisher and processor, services/agenticpm/eventbus
// and credentialsapi (docs/functions.md, "Cold start"). No
// function calls the Streams client (dynamodbstreams): Lambda's event
// source mapping reads the stream; only the operator tool stak-replay
// and the dev poller do.
var sdkClients = map[string][]string{
	"dynamodb": names(catalog.Functions()),
	// The API's connection test and the executor's AssumeRole.
	"sts": {nucleus.API.Name, nucleus.Executor.Name},
	"ec2": {nucleus.Executor.Name},
	"rds": {nucleus.Executor.Name},
	"ecs": {nucleus.Executor.Name},
	// A created message is published by the API, a scheduled or stranded
	// one by the scheduler; the processor reads its ntfy token from SSM.
	"sns": {rezagent.API.Name, rezagent.Scheduler.Name},
	"ssm": {rezagent.Processor.Name},
	// Both release actions (the actions API's release route, the release
	// job); the credentials API alone encrypts integration credentials.
	"eventbridge": {agenticpm.Actions.Name, agenticpm.Release.Name},
	"kms":         {agenticpm.Credentials.Name},
}

func names(fns []service.Function) []string {
	out := make([]string, len(fns))
	for i, f := range fns {
		out[i] = f.Name
	}
	return out
}

// ownDeps are libraries only some functions use, with those functions:
// their package initialisers cost milliseconds of a cold start, so they
// live in the package of those functions' binding
// (services/stak/stakapi, services/agenticpm/agenticpmapi) and no other
// bootstrap may link them (docs/functions.md, "Cold start").
var ownDeps = map[string][]string{
	// Stak's API compiles the inbox schemas clients send, AgenticPM's
	// validates artefact content; the stream consumer and the release job
	// validate nothing.
	"github.com/santhosh-tekuri/jsonschema/v6": {stak.API.Name, agenticpm.API.Name},
}

// clientProblems compares the SDK service clients among deps, what the
// main of function fn links, with those clients says fn calls.
func clientProblems(fn string, deps []string, clients map[string][]string) []string {
	linked := map[string]bool{}
	for _, d := range deps {
		if svc, ok := strings.CutPrefix(d, sdkService); ok && !strings.Contains(svc, "/") {
			linked[svc] = true
		}
	}
	services := slices.Collect(maps.Keys(clients))
	for svc := range linked {
		if !slices.Contains(services, svc) {
			services = append(services, svc)
		}
	}
	slices.Sort(services)
	var problems []string
	for _, svc := range services {
		calls := slices.Contains(clients[svc], fn)
		switch {
		case linked[svc] && !calls && len(clients[svc]) == 0:
			problems = append(problems, fmt.Sprintf("links the SDK's %s client, which no function calls", svc))
		case linked[svc] && !calls:
			problems = append(problems, fmt.Sprintf("links the SDK's %s client, called only by %s: import it in the package of their binding, out of what %s imports",
				svc, strings.Join(clients[svc], " and "), fn))
		case calls && !linked[svc]:
			problems = append(problems, fmt.Sprintf("does not link the SDK's %s client, which sdkClients says it calls: correct sdkClients", svc))
		}
	}
	return problems
}

// The check itself fails a main that links a client its function does
// not call, or misses one it calls.
func TestClientProblems(t *testing.T) {
	clients := map[string][]string{"dynamodb": {"a", "b"}, "sns": {"a"}}
	for _, tt := range []struct {
		name, fn string
		deps     []string
		want     []string
	}{
		{"exactly its clients", "a", []string{sdkService + "dynamodb", sdkService + "sns", sdkService + "sns/types", "net/http"}, nil},
		{"another function's client", "b", []string{sdkService + "dynamodb", sdkService + "sns"},
			[]string{"links the SDK's sns client, called only by a: import it in the package of their binding, out of what b imports"}},
		{"a client nobody calls", "b", []string{sdkService + "dynamodb", sdkService + "dynamodbstreams"},
			[]string{"links the SDK's dynamodbstreams client, which no function calls"}},
		{"a client it calls, missing", "a", []string{sdkService + "dynamodb", sdkService + "internal/presigned-url"},
			[]string{"does not link the SDK's sns client, which sdkClients says it calls: correct sdkClients"}},
	} {
		assert.Equal(t, tt.want, clientProblems(tt.fn, tt.deps, clients), tt.name)
	}
}

type listed struct {
	ImportPath string
	Name       string
	Imports    []string
	Deps       []string
}

// TestDevtoolsOnlyImportedFromDevtools checks every package of the module
// as `go build -tags lambda.norpc` sees it: no runtime package imports a
// dev-only one, and each Lambda main links exactly the SDK clients its
// function calls (sdkClients), none of lambdaMainBans, and of ownDeps
// only its own.
func TestDevtoolsOnlyImportedFromDevtools(t *testing.T) {
	mains := 0
	// linked counts, per ownDeps entry, the mains of its owners that link
	// it: an entry none of them links (a misspelt path, or a dependency
	// gone) would check nothing.
	linked := map[string]int{}
	for _, p := range list(t) {
		if !strings.HasPrefix(p.ImportPath+"/", devTree) {
			for _, imp := range p.Imports {
				assert.False(t, strings.HasPrefix(imp, devTree), "%s imports the dev-only %s: move the code it needs out of devtools/, or the package under it", p.ImportPath, imp)
			}
		}
		if !strings.HasPrefix(p.ImportPath+"/", devTree) && !isOps(p.ImportPath) {
			for _, imp := range p.Imports {
				assert.False(t, strings.HasPrefix(imp, opsTree), "%s imports the operator tools' %s: the runtime never needs it", p.ImportPath, imp)
			}
		}
		// A Lambda main is a contract function's cmd/<name>; stak-replay
		// (ops/) runs on a workstation, the local runner is a dev tool.
		if _, ok := catalog.Function(path.Base(p.ImportPath)); p.Name != "main" || !ok {
			continue
		}
		mains++
		assert.Empty(t, clientProblems(path.Base(p.ImportPath), p.Deps, sdkClients), "Lambda main %s: SDK clients", p.ImportPath)
		for _, d := range p.Deps {
			assert.NotContains(t, lambdaMainBans, d, "Lambda main %s links %s", p.ImportPath, d)
			assert.False(t, isOps(d), "Lambda main %s links the operator code %s", p.ImportPath, d)
			if owners, ok := ownDeps[d]; ok && assert.Contains(t, owners, path.Base(p.ImportPath),
				"Lambda main %s links %s, which only %s use: keep it in the package of their binding, out of what %s imports",
				p.ImportPath, d, strings.Join(owners, " and "), path.Base(p.ImportPath)) {
				linked[d]++
			}
		}
	}
	for d := range ownDeps {
		assert.NotZero(t, linked[d], "no Lambda main links %s: drop it from ownDeps, or correct its path", d)
	}
	assert.Equal(t, len(catalog.Functions()), mains, "Lambda mains checked: one per contract function")
}

func list(t *testing.T) []listed {
	t.Helper()
	// go list reads the workspace's sources in its own process: the
	// cached result holds for the same tree only.
	repo.DependOnTree()
	out, err := exec.Command("go", "list", "-tags", "lambda.norpc", "-json=ImportPath,Name,Imports,Deps", module+"/...").Output()
	require.NoError(t, err, "go list")
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		err := dec.Decode(&p)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		pkgs = append(pkgs, p)
	}
	require.GreaterOrEqual(t, len(pkgs), 20, "go list: packages in %s", module)
	return pkgs
}

// TestIsOps: the services' migrations count as operator code, the
// services themselves do not.
func TestIsOps(t *testing.T) {
	assert.True(t, isOps(module+"/ops/migrate"), "ops/migrate")
	assert.True(t, isOps(module+"/services/itsm/migrations"), "a service's migrations")
	assert.False(t, isOps(module+"/services/itsm"), "a service")
	assert.False(t, isOps(module+"/platform/migrations"), "outside services/")
}
