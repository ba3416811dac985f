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
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New() = %v, want an error containing %q", err, tt.want)
			}
			if n := len(*stack.Node().Children()); n != 0 {
				t.Errorf("rejected New left %d constructs behind", n)
			}
		})
	}
}

func TestDefaultsPerStage(t *testing.T) {
	for stage, want := range map[table.Stage]float64{table.Dev: 7, table.Stg: 30, table.Prod: 180} {
		stack := cdktest.NewStack(t)
		if _, err := gofunction.New(stack, "Fn", gofunction.Props{Stage: stage, ModuleDir: "testdata/hello", Package: "./cmd/hello"}); err != nil {
			t.Fatal(err)
		}
		if _, err := gofunction.New(stack, "Reserved", gofunction.Props{Stage: stage, ModuleDir: "testdata/hello", Package: "./cmd/hello", ReservedConcurrency: 7}); err != nil {
			t.Fatal(err)
		}
		tmpl := cdktest.JSON(t, stack)
		var reserved []any
		for _, r := range tmpl["Resources"].(map[string]any) {
			r := r.(map[string]any)
			p, _ := r["Properties"].(map[string]any)
			switch r["Type"] {
			case "AWS::Logs::LogGroup":
				if p["RetentionInDays"] != want {
					t.Errorf("%s: retention %v, want %v", stage, p["RetentionInDays"], want)
				}
				if wantDel := map[bool]string{true: "Delete", false: "Retain"}[stage == table.Dev]; r["DeletionPolicy"] != wantDel {
					t.Errorf("%s: log group DeletionPolicy %v, want %s", stage, r["DeletionPolicy"], wantDel)
				}
			case "AWS::Lambda::Function":
				got := fmt.Sprintf("%v %v %v %v %v %v", p["Runtime"], p["Architectures"], p["Handler"], p["TracingConfig"], p["MemorySize"], p["Timeout"])
				if got != "provided.al2023 [arm64] bootstrap map[Mode:Active] 256 10" {
					t.Errorf("%s: function %s", stage, got)
				}
				reserved = append(reserved, p["ReservedConcurrentExecutions"])
			}
		}
		// Unreserved by default; the prop reserves exactly its value.
		slices.SortFunc(reserved, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		if fmt.Sprint(reserved) != "[7 <nil>]" {
			t.Errorf("%s: reserved concurrency of the two functions %v, want [7 <nil>]", stage, reserved)
		}
	}
	if gofunction.LogRetention("other") != awslogs.RetentionDays_ONE_WEEK {
		t.Error("unknown stage does not fall back to the shortest retention")
	}
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
	if _, err := gofunction.New(stack, "Fn", gofunction.Props{Stage: table.Dev, ModuleDir: "testdata/hello", Package: "./cmd/hello"}); err != nil {
		t.Fatal(err)
	}
	cdktest.Assert(t, func() { app.Synth(nil) })
	bins, _ := filepath.Glob(filepath.Join(out, "asset.*", "bootstrap"))
	if len(bins) != 1 {
		t.Fatalf("found %v, want one bundled bootstrap", bins)
	}
	f, err := elf.Open(bins[0])
	if err != nil {
		t.Fatalf("bootstrap is not an ELF binary: %v", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		t.Errorf("bootstrap machine %v, want arm64", f.Machine)
	}
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
		if _, err := gofunction.New(stack, filepath.Base(pkg), gofunction.Props{Stage: table.Dev, ModuleDir: "testdata/hello", Package: pkg}); err != nil {
			t.Fatal(err)
		}
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
	if len(keys) != 3 {
		t.Fatalf("three functions from three packages share assets: %v", keys)
	}
	if n := gofunction.SingleBuilds() - single; n != 1 {
		t.Errorf("%d packages built on their own beside the batch, want 1 (cmd/tool)", n)
	}
	bins, _ := filepath.Glob(filepath.Join(out, "asset.*", "bootstrap"))
	if len(bins) != 3 {
		t.Fatalf("bundled %v, want three bootstraps", bins)
	}

	// The batch held the Lambda mains only, and each asset is the binary a
	// build of its package alone makes: the asset hash is of the output.
	batched, err := os.ReadDir(gofunction.BatchDir(out, "testdata/hello"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range batched {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "hello other" {
		t.Errorf("batch built %v, want [hello other]", names)
	}
	alone := map[string]bool{}
	for _, pkg := range []string{"./cmd/hello", "./cmd/other", "./cmd/tool"} {
		bin := filepath.Join(t.TempDir(), "bootstrap")
		cmd := exec.Command("go", "build", "-tags", gofunction.BuildTags, "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", bin, pkg)
		cmd.Dir = "testdata/hello"
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		alone[sha256File(t, bin)] = true
	}
	for _, bin := range bins {
		if !alone[sha256File(t, bin)] {
			t.Errorf("%s differs from a build of its package alone", bin)
		}
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestLocalBundlingFailsLoudly(t *testing.T) {
	app := bundlingApp(t, t.TempDir())
	stack := awscdk.NewStack(app, jsii.String("Test"), nil)
	_, err := gofunction.New(stack, "Fn", gofunction.Props{Stage: table.Dev, ModuleDir: "testdata/broken", Package: "./cmd/broken"})
	if err == nil || !strings.Contains(err.Error(), "undefined: undefinedCall") {
		t.Fatalf("New() of a broken function = %v, want the compiler error", err)
	}
}

// The asset hash is the binary's: a second synth into the same folder with
// unchanged binaries finds its assets and bundles nothing, and a change to
// the code changes the hash.
func TestAssetHashFollowsTheBinary(t *testing.T) {
	module := t.TempDir()
	if err := os.CopyFS(module, os.DirFS("testdata/hello")); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	synth := func() (s3Key string, bundled int64) {
		t.Helper()
		before := gofunction.Bundles()
		app := bundlingApp(t, out)
		stack := awscdk.NewStack(app, jsii.String("Test"), nil)
		if _, err := gofunction.New(stack, "Fn", gofunction.Props{Stage: table.Dev, ModuleDir: module, Package: "./cmd/hello"}); err != nil {
			t.Fatal(err)
		}
		for _, r := range cdktest.JSON(t, stack)["Resources"].(map[string]any) {
			r := r.(map[string]any)
			if r["Type"] == "AWS::Lambda::Function" {
				s3Key = fmt.Sprint(r["Properties"].(map[string]any)["Code"].(map[string]any)["S3Key"])
			}
		}
		return s3Key, gofunction.Bundles() - before
	}
	first, n := synth()
	if n != 1 {
		t.Fatalf("first synth bundled %d times, want 1", n)
	}
	bins, _ := filepath.Glob(filepath.Join(out, "asset.*", "bootstrap"))
	if len(bins) != 1 {
		t.Fatalf("bundled %v, want one bootstrap", bins)
	}
	if !strings.Contains(first, strings.TrimPrefix(filepath.Base(filepath.Dir(bins[0])), "asset.")) {
		t.Errorf("S3Key %s is not the staged folder %s", first, filepath.Dir(bins[0]))
	}
	// A new process would start with an empty memo: so does this test.
	gofunction.ForgetBuilds()
	again, n := synth()
	if n != 0 || again != first {
		t.Errorf("unchanged binary: bundled %d times, S3Key %s → %s; want no bundling and the same key", n, first, again)
	}

	main := filepath.Join(module, "cmd", "hello", "main.go")
	if err := os.WriteFile(main, []byte("package main\n\nimport \"github.com/aws/aws-lambda-go/lambda\"\n\nfunc main() { lambda.Start(func() (string, error) { return \"changed\", nil }) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gofunction.ForgetBuilds()
	changed, n := synth()
	if n != 1 || changed == first {
		t.Errorf("changed code: bundled %d times, S3Key %s → %s; want one bundle and a new key", n, first, changed)
	}
}
