package gofunction_test

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	// The bundling's go build reads testdata in another process: opened
	// here, its files key Go's cached result of this package.
	if err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			var f *os.File
			if f, err = os.Open(path); err == nil {
				f.Close()
			}
		}
		return err
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

func TestNewRejectsBadProps(t *testing.T) {
	good := gofunction.Props{Stage: table.Dev, ModuleDir: "testdata/hello", Package: "./cmd/hello"}
	tests := []struct {
		name   string
		mutate func(*gofunction.Props)
		want   string
	}{
		{"unknown stage", func(p *gofunction.Props) { p.Stage = "qa" }, `stage "qa" is not one of dev, stage, prod`},
		{"no module", func(p *gofunction.Props) { p.ModuleDir = "" }, "ModuleDir is empty"},
		{"module without go.mod", func(p *gofunction.Props) { p.ModuleDir = "testdata" }, `ModuleDir "testdata" has no go.mod`},
		{"absolute package", func(p *gofunction.Props) { p.Package = "/cmd/hello" }, `Package "/cmd/hello": use a path inside the module starting with ./`},
		{"escaping package", func(p *gofunction.Props) { p.Package = "./../broken" }, `Package "./../broken": use a path inside the module`},
		{"missing package", func(p *gofunction.Props) { p.Package = "./cmd/nope" }, `Package "./cmd/nope" does not exist`},
		{"memory", func(p *gofunction.Props) { p.MemoryMB = 64 }, "MemoryMB=64: Lambda allows 128 to 10240"},
		{"timeout", func(p *gofunction.Props) { p.TimeoutSeconds = 901 }, "TimeoutSeconds=901: Lambda allows 1 to 900"},
		{"negative concurrency", func(p *gofunction.Props) { p.ReservedConcurrency = -1 }, "ReservedConcurrency=-1: use 1 to 900"},
		{"concurrency over the account", func(p *gofunction.Props) { p.ReservedConcurrency = 901 }, "ReservedConcurrency=901: use 1 to 900 (Lambda keeps 100 of the default 1000 unreserved)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack := cdktest.NewStack(t)
			p := good
			tt.mutate(&p)
			_, err := gofunction.New(stack, "Fn", p)
			require.ErrorContains(t, err, tt.want)
			assert.Empty(t, *stack.Node().Children(), "rejected New left constructs behind")
		})
	}
}

func TestDefaultsPerStage(t *testing.T) {
	for stage, want := range map[table.Stage]float64{table.Dev: 7, table.Stg: 30, table.Prod: 180} {
		stack := cdktest.NewStack(t)
		_, err := gofunction.New(stack, "Fn", gofunction.Props{Stage: stage, ModuleDir: "testdata/hello", Package: "./cmd/hello"})
		require.NoError(t, err)
		_, err = gofunction.New(stack, "Reserved", gofunction.Props{Stage: stage, ModuleDir: "testdata/hello", Package: "./cmd/hello", ReservedConcurrency: 7})
		require.NoError(t, err)
		tmpl := cdktest.JSON(t, stack)
		var reserved []any
		for _, r := range tmpl["Resources"].(map[string]any) {
			r := r.(map[string]any)
			p, _ := r["Properties"].(map[string]any)
			switch r["Type"] {
			case "AWS::Logs::LogGroup":
				assert.Equal(t, want, p["RetentionInDays"], "%s: retention", stage)
				wantDel := map[bool]string{true: "Delete", false: "Retain"}[stage == table.Dev]
				assert.Equal(t, wantDel, r["DeletionPolicy"], "%s: log group DeletionPolicy", stage)
			case "AWS::Lambda::Function":
				got := fmt.Sprintf("%v %v %v %v %v %v", p["Runtime"], p["Architectures"], p["Handler"], p["TracingConfig"], p["MemorySize"], p["Timeout"])
				assert.Equal(t, "provided.al2023 [arm64] bootstrap map[Mode:Active] 256 10", got, "%s: function", stage)
				reserved = append(reserved, p["ReservedConcurrentExecutions"])
			}
		}
		// Unreserved by default; the prop reserves exactly its value.
		slices.SortFunc(reserved, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		assert.Equal(t, "[7 <nil>]", fmt.Sprint(reserved), "%s: reserved concurrency of the two functions", stage)
	}
	assert.Equal(t, awslogs.RetentionDays_ONE_WEEK, gofunction.LogRetention("other"), "unknown stage does not fall back to the shortest retention")
}

// bundlingApp enables bundling, which the other tests skip.
func bundlingApp(t *testing.T, outdir string) awscdk.App {
	ctx := cdktest.TestContext(t, true)
	return awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(outdir)})
}

func TestLocalBundlingBuildsLinuxArm64Bootstrap(t *testing.T) {
	out := t.TempDir()
	app := bundlingApp(t, out)
	stack := awscdk.NewStack(app, jsii.String("Test"), nil)
	_, err := gofunction.New(stack, "Fn", gofunction.Props{Stage: table.Dev, ModuleDir: "testdata/hello", Package: "./cmd/hello"})
	require.NoError(t, err)
	cdktest.Assert(t, func() { app.Synth(nil) })
	bins, _ := filepath.Glob(filepath.Join(out, "asset.*", "bootstrap"))
	require.Len(t, bins, 1, "want one bundled bootstrap")
	f, err := elf.Open(bins[0])
	require.NoError(t, err, "bootstrap is not an ELF binary")
	defer f.Close()
	assert.Equal(t, elf.EM_AARCH64, f.Machine, "bootstrap machine")
}

// Functions of one module must get their own binaries: CDK caches bundles
// by source directory and bundling options. The Lambda mains come from one
// batch build; a main without the Lambda runtime is built on its own.
func TestEachPackageGetsItsOwnAsset(t *testing.T) {
	out := t.TempDir()
	app := bundlingApp(t, out)
	stack := awscdk.NewStack(app, jsii.String("Test"), nil)
	single := gofunction.SingleBuilds()
	for _, pkg := range []string{"./cmd/hello", "./cmd/other", "./cmd/tool"} {
		_, err := gofunction.New(stack, filepath.Base(pkg), gofunction.Props{Stage: table.Dev, ModuleDir: "testdata/hello", Package: pkg})
		require.NoError(t, err)
	}
	tmpl := cdktest.JSON(t, stack)
	keys := map[string]bool{}
	for _, r := range tmpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] == "AWS::Lambda::Function" {
			code := r["Properties"].(map[string]any)["Code"].(map[string]any)
			keys[fmt.Sprint(code["S3Key"])] = true
		}
	}
	require.Len(t, keys, 3, "three functions from three packages share assets")
	assert.Equal(t, int64(1), gofunction.SingleBuilds()-single, "packages built on their own beside the batch, want 1 (cmd/tool)")
	bins, _ := filepath.Glob(filepath.Join(out, "asset.*", "bootstrap"))
	require.Len(t, bins, 3, "want three bootstraps")

	// The batch held the Lambda mains only, and each asset is the binary a
	// build of its package alone makes: the asset hash is of the output.
	batched, err := os.ReadDir(gofunction.BatchDir(out, "testdata/hello"))
	require.NoError(t, err)
	var names []string
	for _, e := range batched {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"hello", "other"}, names, "batch built")
	alone := map[string]bool{}
	for _, pkg := range []string{"./cmd/hello", "./cmd/other", "./cmd/tool"} {
		bin := filepath.Join(t.TempDir(), "bootstrap")
		cmd := exec.Command("go", "build", "-tags", gofunction.BuildTags, "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", bin, pkg)
		cmd.Dir = "testdata/hello"
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "GOWORK=off")
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "go build %s:\n%s", pkg, b)
		alone[sha256File(t, bin)] = true
	}
	for _, bin := range bins {
		assert.True(t, alone[sha256File(t, bin)], "%s differs from a build of its package alone", bin)
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestLocalBundlingFailsLoudly(t *testing.T) {
	app := bundlingApp(t, t.TempDir())
	stack := awscdk.NewStack(app, jsii.String("Test"), nil)
	_, err := gofunction.New(stack, "Fn", gofunction.Props{Stage: table.Dev, ModuleDir: "testdata/broken", Package: "./cmd/broken"})
	require.ErrorContains(t, err, "undefined: undefinedCall", "New() of a broken function: want the compiler error")
}

// The asset hash is the binary's: a second synth into the same folder with
// unchanged binaries finds its assets and bundles nothing, and a change to
// the code changes the hash.
func TestAssetHashFollowsTheBinary(t *testing.T) {
	module := t.TempDir()
	require.NoError(t, os.CopyFS(module, os.DirFS("testdata/hello")))
	out := t.TempDir()
	synth := func() (s3Key string, bundled int64) {
		t.Helper()
		before := gofunction.Bundles()
		app := bundlingApp(t, out)
		stack := awscdk.NewStack(app, jsii.String("Test"), nil)
		_, err := gofunction.New(stack, "Fn", gofunction.Props{Stage: table.Dev, ModuleDir: module, Package: "./cmd/hello"})
		require.NoError(t, err)
		for _, r := range cdktest.JSON(t, stack)["Resources"].(map[string]any) {
			r := r.(map[string]any)
			if r["Type"] == "AWS::Lambda::Function" {
				s3Key = fmt.Sprint(r["Properties"].(map[string]any)["Code"].(map[string]any)["S3Key"])
			}
		}
		return s3Key, gofunction.Bundles() - before
	}
	first, n := synth()
	require.Equal(t, int64(1), n, "first synth bundled")
	bins, _ := filepath.Glob(filepath.Join(out, "asset.*", "bootstrap"))
	require.Len(t, bins, 1, "want one bootstrap")
	assert.Contains(t, first, strings.TrimPrefix(filepath.Base(filepath.Dir(bins[0])), "asset."), "S3Key is not the staged folder %s", filepath.Dir(bins[0]))
	// A new process would start with an empty memo: so does this test.
	gofunction.ForgetBuilds()
	again, n := synth()
	assert.Zero(t, n, "unchanged binary: bundled")
	assert.Equal(t, first, again, "unchanged binary: S3Key")

	main := filepath.Join(module, "cmd", "hello", "main.go")
	require.NoError(t, os.WriteFile(main, []byte("package main\n\nimport \"github.com/aws/aws-lambda-go/lambda\"\n\nfunc main() { lambda.Start(func() (string, error) { return \"changed\", nil }) }\n"), 0o644))
	gofunction.ForgetBuilds()
	changed, n := synth()
	assert.Equal(t, int64(1), n, "changed code: bundled")
	assert.NotEqual(t, first, changed, "changed code: want a new S3Key")
}
