// Package artifact runs the bundled assets of a synthesized stage — the
// bootstrap files `cdk deploy` uploads — as Lambda runs them: under AWS's
// Runtime Interface Emulator, arm64 under qemu-aarch64-static (or, without
// it, a host build with the same recorded settings), with the template's
// environment and tables created from the templates in DynamoDB Local. It
// sends API Gateway HTTP API 2.0 events and DynamoDB Streams events and
// checks the answers against the doc pages.
//
// `make test-artifact` (part of `make test`) synthesizes the dev stage and
// runs it with:
//
//	ARTIFACT_ASSEMBLY  the stage's nested cloud assembly (cdk.out/assembly-dev)
//	ARTIFACT_RIE       the aws-lambda-rie binary
//
// Without ARTIFACT_ASSEMBLY the package's tests skip (a plain `go test
// ./test/...` has no bundled assets); with it every step must succeed.
package artifact

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Stage is what the tests found and started, shared by every test.
type Stage struct {
	Mode      Mode
	QEMU      string // the emulator binary when Mode is QEMU
	RIE       string
	Endpoint  string // DynamoDB Local
	Client    *dynamodb.Client
	Functions map[string]*Function // by DYNASTACK_SERVICE
	Tables    map[string]string    // logical id → table name, every template
	Dir       string               // the assembly read
}

var stage *Stage

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir := os.Getenv("ARTIFACT_ASSEMBLY")
	if dir == "" {
		return m.Run() // every test skips: see requireStage
	}
	s, cleanup, err := setup(dir)
	defer cleanup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "artifact:", err)
		return 1
	}
	stage = s
	fmt.Printf("artifact: %s; %d functions of %s under aws-lambda-rie, DynamoDB Local %s\n", s.Mode, len(s.Functions), s.Dir, s.Endpoint)
	for _, n := range slices.Sorted(maps.Keys(s.Functions)) {
		fn := s.Functions[n]
		st, err := os.Stat(fn.Bootstrap)
		if err != nil {
			fmt.Fprintln(os.Stderr, "artifact:", err)
			return 1
		}
		fmt.Printf("artifact: %-12s %s %.1f MiB (%s)\n", n, fn.Main, float64(st.Size())/(1<<20), filepath.Base(filepath.Dir(fn.Bootstrap)))
	}
	return m.Run()
}

func requireStage(t *testing.T) *Stage {
	t.Helper()
	// The assembly is synthesized from the whole tree, outside this
	// module: the cached result holds for the same tree only (read in a
	// test: Go's test cache records what a test reads, not TestMain).
	repo.DependOnTree()
	if stage == nil {
		t.Skip("ARTIFACT_ASSEMBLY is not set: run `make test-artifact`, which synthesizes the dev stage first")
	}
	return stage
}

func setup(dir string) (*Stage, func(), error) {
	var closers []func()
	cleanup := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	rie := os.Getenv("ARTIFACT_RIE")
	if rie == "" {
		return nil, cleanup, fmt.Errorf("ARTIFACT_RIE is not set: the path of aws-lambda-rie (make test-artifact installs it)")
	}
	root, err := repo.Root("")
	if err != nil {
		return nil, cleanup, err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir) // go test runs in the package's folder
	}
	tmpls, err := cfntables.LoadDir(dir)
	if err != nil {
		return nil, cleanup, err
	}
	mode, qemu := detectMode()
	s := &Stage{Mode: mode, QEMU: qemu, RIE: rie, Functions: map[string]*Function{}, Tables: map[string]string{}, Dir: dir}

	ctx := context.Background()
	srv, err := ddblocal.Start(ctx, ddblocal.Options{Root: root})
	if err != nil {
		return nil, cleanup, err
	}
	closers = append(closers, func() { srv.Close() })
	s.Endpoint = srv.Endpoint
	s.Client, err = ddb.NewClient(ctx, srv.Getenv(func(string) string { return "" }))
	if err != nil {
		return nil, cleanup, err
	}
	hostDir, err := os.MkdirTemp("", "artifact-host-")
	if err != nil {
		return nil, cleanup, err
	}
	closers = append(closers, func() { os.RemoveAll(hostDir) })

	for _, t := range tmpls {
		names, err := cfntables.Create(ctx, s.Client, t, cfntables.Options{})
		if err != nil {
			return nil, cleanup, err
		}
		for k, v := range names {
			s.Tables[k] = v
		}
		assets, err := assetDirs(t.Path)
		if err != nil {
			return nil, cleanup, err
		}
		fns, err := t.Functions()
		if err != nil {
			return nil, cleanup, err
		}
		props, err := functionProps(t.Path)
		if err != nil {
			return nil, cleanup, err
		}
		for _, f := range fns {
			name := f.Service()
			if name == "" {
				continue
			}
			p := props[f.LogicalID]
			asset, ok := assets[strings.TrimSuffix(p.Code.S3Key, ".zip")]
			if !ok {
				return nil, cleanup, fmt.Errorf("%s: function %s: no asset for code %s in the assets manifest", t.Path, f.LogicalID, p.Code.S3Key)
			}
			env, err := f.Environment(t.LocalRefs(names))
			if err != nil {
				return nil, cleanup, err
			}
			env[ddblocal.EnvEndpoint] = srv.Endpoint
			fn := &Function{
				LogicalID: f.LogicalID, Service: name, Env: env, Template: t.Path,
				Bootstrap: filepath.Join(asset, "bootstrap"),
				MemoryMB:  p.MemorySize, Timeout: p.Timeout,
			}
			bi, err := checkBootstrap(fn.Bootstrap)
			if err != nil {
				return nil, cleanup, err
			}
			fn.Main = bi.Path
			fn.Run = fn.Bootstrap
			if mode == HostBuild {
				if fn.Run, err = hostBuild(root, hostDir, bi); err != nil {
					return nil, cleanup, err
				}
			}
			key := name
			if _, dup := s.Functions[key]; dup {
				// A second function of one service (a worker beside
				// its API): the first keeps the service's name.
				key = name + "/" + f.LogicalID
			}
			s.Functions[key] = fn
		}
	}
	if len(s.Functions) == 0 {
		return nil, cleanup, fmt.Errorf("no function with %s in %s", service.EnvFunction, dir)
	}
	return s, cleanup, nil
}

// assetDirs maps the asset hashes of a stack's assets manifest (beside its
// template) to the staged directories cdk deploy zips and uploads.
func assetDirs(template string) (map[string]string, error) {
	manifest := strings.TrimSuffix(template, ".template.json") + ".assets.json"
	b, err := os.ReadFile(manifest)
	if err != nil {
		return nil, err
	}
	var m struct {
		Files map[string]struct {
			Source struct {
				Path      string `json:"path"`
				Packaging string `json:"packaging"`
			} `json:"source"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", manifest, err)
	}
	out := map[string]string{}
	for hash, f := range m.Files {
		if f.Source.Packaging == "zip" {
			out[hash] = filepath.Join(filepath.Dir(manifest), f.Source.Path)
		}
	}
	return out, nil
}

type fnProps struct {
	Code struct {
		S3Key string `json:"S3Key"`
	} `json:"Code"`
	MemorySize int `json:"MemorySize"`
	Timeout    int `json:"Timeout"`
}

// functionProps reads what cfntables does not: each function's code key,
// memory and timeout.
func functionProps(template string) (map[string]fnProps, error) {
	b, err := os.ReadFile(template)
	if err != nil {
		return nil, err
	}
	var t struct {
		Resources map[string]struct {
			Type       string          `json:"Type"`
			Properties json.RawMessage `json:"Properties"`
		} `json:"Resources"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", template, err)
	}
	out := map[string]fnProps{}
	for id, r := range t.Resources {
		if r.Type != cfntables.TypeFunction {
			continue
		}
		var p fnProps
		if err := json.Unmarshal(r.Properties, &p); err != nil {
			return nil, fmt.Errorf("%s: function %s: %w", template, id, err)
		}
		out[id] = p
	}
	return out, nil
}
