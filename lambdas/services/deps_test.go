package services_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"

	agenticpm "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/catalog"
	stak "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
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
)

// lambdaMainBans are what no Lambda main may link, wherever it comes from:
// the test framework; the Streams client (Lambda's event source mapping
// reads the stream; only the operator tool stak-replay and the dev poller
// do); and the SDK clients of the services the functions call through
// platform/awsrpc, whose package initialisers (SSM's, RDS's and ECS's
// schemas 1.5–3 ms each, KMS's and EventBridge's about 0.5 ms) cost every
// cold start of a function that calls an operation or two of them
// (docs/functions.md, "Cold start").
var lambdaMainBans = []string{"testing", "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams",
	"github.com/aws/aws-sdk-go-v2/service/ec2", "github.com/aws/aws-sdk-go-v2/service/rds",
	"github.com/aws/aws-sdk-go-v2/service/ecs", "github.com/aws/aws-sdk-go-v2/service/ssm",
	"github.com/aws/aws-sdk-go-v2/service/sts", "github.com/aws/aws-sdk-go-v2/service/sns",
	"github.com/aws/aws-sdk-go-v2/service/kms", "github.com/aws/aws-sdk-go-v2/service/eventbridge"}

// ownDeps are packages only some functions use, with those functions:
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

type listed struct {
	ImportPath string
	Name       string
	Imports    []string
	Deps       []string
}

// TestDevtoolsOnlyImportedFromDevtools checks every package of the module
// as `go build -tags lambda.norpc` sees it.
func TestDevtoolsOnlyImportedFromDevtools(t *testing.T) {
	mains := 0
	// linked counts, per ownDeps entry, the mains of its owners that link
	// it: an entry none of them links (a misspelt path, or a dependency
	// gone) would check nothing.
	linked := map[string]int{}
	for _, p := range list(t) {
		if !strings.HasPrefix(p.ImportPath+"/", devTree) {
			for _, imp := range p.Imports {
				if strings.HasPrefix(imp, devTree) {
					t.Errorf("%s imports the dev-only %s: move the code it needs out of devtools/, or the package under it", p.ImportPath, imp)
				}
			}
		}
		// A Lambda main is a contract function's cmd/<name>; stak-replay
		// runs on a workstation, the local runner is a dev tool.
		if _, ok := catalog.Function(path.Base(p.ImportPath)); p.Name != "main" || !ok {
			continue
		}
		mains++
		for _, d := range p.Deps {
			if slices.Contains(lambdaMainBans, d) {
				t.Errorf("Lambda main %s links %s", p.ImportPath, d)
			}
			owners, ok := ownDeps[d]
			switch {
			case !ok:
			case slices.Contains(owners, path.Base(p.ImportPath)):
				linked[d]++
			default:
				t.Errorf("Lambda main %s links %s, which only %s use: keep it in the package of their binding, out of what %s imports",
					p.ImportPath, d, strings.Join(owners, " and "), path.Base(p.ImportPath))
			}
		}
	}
	for d := range ownDeps {
		if linked[d] == 0 {
			t.Errorf("no Lambda main links %s: drop it from ownDeps, or correct its path", d)
		}
	}
	if want := len(catalog.Functions()); mains != want {
		t.Errorf("checked %d Lambda mains, want one per contract function (%d)", mains, want)
	}
}

func list(t *testing.T) []listed {
	t.Helper()
	// go list reads the workspace's sources in its own process: the
	// cached result holds for the same tree only.
	repo.DependOnTree()
	out, err := exec.Command("go", "list", "-tags", "lambda.norpc", "-json=ImportPath,Name,Imports,Deps", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages in %s", len(pkgs), module)
	}
	return pkgs
}
