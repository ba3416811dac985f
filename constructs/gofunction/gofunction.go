// Package gofunction builds a Go Lambda function from a package of a local Go
// module, without Docker: the bootstrap is compiled by the local Go toolchain
// during synth (provided.al2023, arm64).
package gofunction

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3assets"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/table"
)

// Limits and defaults.
const (
	// DefaultMemoryMB suits a JSON API over DynamoDB: Lambda's CPU share
	// grows with memory, and 256 MB keeps cold starts short for a Go binary.
	DefaultMemoryMB = 256
	// DefaultTimeout is below API Gateway's 30 s integration timeout, so the
	// function fails before the gateway does and logs why.
	DefaultTimeout = 10
	MinMemoryMB    = 128
	MaxMemoryMB    = 10240
	MaxTimeout     = 900
	// MaxReservedConcurrency is what one function may reserve in an account
	// at Lambda's default quota of 1000 concurrent executions: Lambda keeps
	// 100 of them unreserved.
	MaxReservedConcurrency = 900
	// BuildTags selects aws-lambda-go's RPC-free mode for provided runtimes.
	BuildTags = "lambda.norpc"
)

// Props configures a Go function.
type Props struct {
	// Stage decides log retention and removal of the log group. Required.
	Stage table.Stage
	// ModuleDir is the directory of the Go module holding the function. A
	// relative path is resolved from the working directory of the app.
	// Required.
	ModuleDir string
	// Package is the main package to build, relative to ModuleDir, e.g.
	// "./cmd/itsm". Required.
	Package string
	// Environment variables of the function.
	//
	// Default: none.
	Environment map[string]*string
	// MemoryMB of the function.
	//
	// Default: DefaultMemoryMB.
	MemoryMB int
	// TimeoutSeconds of one invocation.
	//
	// Default: DefaultTimeout.
	TimeoutSeconds int
	// LogRetention of the function's log group.
	//
	// Default: LogRetention(Stage).
	LogRetention awslogs.RetentionDays
	// Description of the function.
	//
	// Default: none.
	Description string
	// ReservedConcurrency sets aside this many concurrent executions for
	// the function and caps it there: a flood on one function can neither
	// exceed it nor take the others' share. At most MaxReservedConcurrency;
	// the sum over an account must leave 100 unreserved.
	//
	// Default: 0, unreserved (the account's shared pool, no cap).
	ReservedConcurrency int
}

// LogRetention is the default per stage: short where logs are for debugging,
// long where they are evidence.
func LogRetention(stage table.Stage) awslogs.RetentionDays {
	switch stage {
	case table.Prod:
		return awslogs.RetentionDays_SIX_MONTHS
	case table.Stg:
		return awslogs.RetentionDays_ONE_MONTH
	default:
		return awslogs.RetentionDays_ONE_WEEK
	}
}

// LogRemovalPolicy keeps logs of deployed stages when a stack is deleted;
// dev logs go with the stack.
func LogRemovalPolicy(stage table.Stage) awscdk.RemovalPolicy {
	if stage == table.Dev {
		return awscdk.RemovalPolicy_DESTROY
	}
	return awscdk.RemovalPolicy_RETAIN
}

var packagePattern = regexp.MustCompile(`^\./[A-Za-z0-9_./-]+$`)

// Function is a Go Lambda function and its log group.
type Function struct {
	Function awslambda.Function
	LogGroup awslogs.LogGroup
	Role     awsiam.Role
}

// New builds the function. Props errors name the value and the fix.
func New(scope constructs.Construct, id string, props Props) (*Function, error) {
	path := *scope.Node().Path() + "/" + id
	if _, err := table.ParseStage(string(props.Stage)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if props.ModuleDir == "" {
		return nil, fmt.Errorf("%s: ModuleDir is empty: set it to the directory holding the function's go.mod, e.g. \"lambdas\"", path)
	}
	moduleDir, err := filepath.Abs(props.ModuleDir)
	if err != nil {
		return nil, fmt.Errorf("%s: ModuleDir %q: %w", path, props.ModuleDir, err)
	}
	if _, err := os.Stat(filepath.Join(moduleDir, "go.mod")); err != nil {
		return nil, fmt.Errorf("%s: ModuleDir %q has no go.mod: point it at the Go module of the function", path, props.ModuleDir)
	}
	if !packagePattern.MatchString(props.Package) || strings.Contains(props.Package, "..") {
		return nil, fmt.Errorf("%s: Package %q: use a path inside the module starting with ./, e.g. \"./cmd/itsm\"", path, props.Package)
	}
	if _, err := os.Stat(filepath.Join(moduleDir, props.Package)); err != nil {
		return nil, fmt.Errorf("%s: Package %q does not exist in %s", path, props.Package, props.ModuleDir)
	}
	memory := props.MemoryMB
	if memory == 0 {
		memory = DefaultMemoryMB
	}
	if memory < MinMemoryMB || memory > MaxMemoryMB {
		return nil, fmt.Errorf("%s: MemoryMB=%d: Lambda allows %d to %d", path, memory, MinMemoryMB, MaxMemoryMB)
	}
	timeout := props.TimeoutSeconds
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < 1 || timeout > MaxTimeout {
		return nil, fmt.Errorf("%s: TimeoutSeconds=%d: Lambda allows 1 to %d", path, timeout, MaxTimeout)
	}
	if props.ReservedConcurrency < 0 || props.ReservedConcurrency > MaxReservedConcurrency {
		return nil, fmt.Errorf("%s: ReservedConcurrency=%d: use 1 to %d (Lambda keeps 100 of the default 1000 unreserved), or 0 for none", path, props.ReservedConcurrency, MaxReservedConcurrency)
	}
	retention := props.LogRetention
	if retention == "" {
		retention = LogRetention(props.Stage)
	}
	removal := LogRemovalPolicy(props.Stage)

	code, err := assetCode(scope, moduleDir, props.Package)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	logs := awslogs.NewLogGroup(scope, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention:     retention,
		RemovalPolicy: removal,
	})
	var desc *string
	if props.Description != "" {
		desc = jsii.String(props.Description)
	}
	// An own role instead of AWSLambdaBasicExecutionRole: that managed policy
	// allows writing to every log group of the account.
	role := awsiam.NewRole(scope, jsii.String(id+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String(fmt.Sprintf("Execution role of %s", path)),
	})
	logs.GrantWrite(role)
	env := props.Environment
	var reserved *float64
	if props.ReservedConcurrency > 0 {
		reserved = jsii.Number(float64(props.ReservedConcurrency))
	}
	fn, err := newFunction(scope, id, &awslambda.FunctionProps{
		ReservedConcurrentExecutions: reserved,
		Runtime:                      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:                 awslambda.Architecture_ARM_64(),
		Handler:                      jsii.String("bootstrap"),
		Code:                         code,
		Environment:                  &env,
		MemorySize:                   jsii.Number(float64(memory)),
		Timeout:                      awscdk.Duration_Seconds(jsii.Number(float64(timeout))),
		Tracing:                      awslambda.Tracing_ACTIVE,
		LogGroup:                     logs,
		Role:                         role,
		Description:                  desc,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Function{Function: fn, LogGroup: logs, Role: role}, nil
}

// assetCode is the function's code: a directory holding the bootstrap.
//
// When the stack bundles (the CLI selected it, or the app asked for all),
// the bootstrap is built before the asset is made and its SHA-256 is the
// asset hash (CUSTOM: still a hash of the output, the binary that deploys,
// never of the sources). CDK names the staged folder asset.<hash>, so a
// synth whose binaries did not change finds the folders of the last one
// and bundles nothing: no copy, no hashing of the folder in the kernel, no
// callback into Go. A compile error fails here, before any construct of
// the function exists, with the compiler's output.
//
// When the stack skips bundling (`cdk deploy -e` of another stack, tests
// that do not bundle), nothing is built: CDK stages a placeholder, as it
// does for an OUTPUT hash.
func assetCode(scope constructs.Construct, moduleDir, pkg string) (awslambda.AssetCode, error) {
	bundling := &awscdk.BundlingOptions{
		// Never pulled: local bundling either succeeds or fails synth.
		Image: awscdk.DockerImage_FromRegistry(jsii.String("public.ecr.aws/docker/library/golang:1")),
		Local: &goBuild{moduleDir: moduleDir, pkg: pkg},
		// What the local bundler runs, spelled out: CDK keys its asset
		// cache on the source directory and these options, not on the Go
		// bundler. Without the package here, every function of one module
		// would share the first function's binary.
		Command:     jsii.Strings(goBuildArgs(pkg, "/asset-output/bootstrap")...),
		Environment: &map[string]*string{"GOOS": jsii.String("linux"), "GOARCH": jsii.String("arm64"), "CGO_ENABLED": jsii.String("0")},
	}
	opts := &awss3assets.AssetOptions{AssetHashType: awscdk.AssetHashType_OUTPUT, Bundling: bundling}
	if *awscdk.Stack_Of(scope).BundlingRequired() {
		bin, err := bootstrap(moduleDir, pkg, *awscdk.Stage_Of(scope).AssetOutdir())
		if err != nil {
			return nil, err
		}
		opts.AssetHashType = awscdk.AssetHashType_CUSTOM
		opts.AssetHash = jsii.String(bin.sum)
	}
	return awslambda.Code_FromAsset(jsii.String(moduleDir), opts), nil
}

// newFunction turns a bundling panic (a failed copy) into an error: the
// asset is bundled while the function is constructed.
func newFunction(scope constructs.Construct, id string, props *awslambda.FunctionProps) (fn awslambda.Function, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return awslambda.NewFunction(scope, jsii.String(id), props), nil
}

// BuildFlags are the go build flags of every bootstrap, its output and
// package aside (GOOS=linux, GOARCH=arm64, CGO_ENABLED=0, no go.work). The
// repository's make test compiles the Lambda mains with the same flags
// beside its tests, so that a synth's bundling finds them in Go's build
// cache (LAMBDA_BUILD_FLAGS in the Makefile, kept equal by a test).
func BuildFlags() []string {
	return []string{"-tags", BuildTags, "-trimpath", "-buildvcs=false", "-ldflags", "-s -w"}
}

func goBuildArgs(pkg, out string) []string {
	return append(append([]string{"go", "build"}, BuildFlags()...), "-o", out, pkg)
}

// goBuild implements awscdk.ILocalBundling: it copies the bootstrap that
// assetCode built and hashed.
type goBuild struct {
	moduleDir, pkg string
}

// TryBundle puts the bootstrap of the package into outputDir. It never
// returns false: false makes CDK fall back to Docker, which is absent here
// and would hide the real error, so a failure panics (CDK turns it into a
// synth error).
func (g *goBuild) TryBundle(outputDir *string, _ *awscdk.BundlingOptions) *bool {
	bundles.Add(1)
	bin, err := bootstrap(g.moduleDir, g.pkg, filepath.Dir(*outputDir))
	if err == nil {
		err = copyFile(bin.path, filepath.Join(*outputDir, "bootstrap"))
	}
	if err != nil {
		panic(fmt.Sprintf("gofunction: %s: %v", g.pkg, err))
	}
	return jsii.Bool(true)
}

// binary is a built bootstrap and its SHA-256, the asset hash.
type binary struct {
	path, sum string
}

// built holds the bootstraps of this process, one build and one hash per
// output root, module and package.
var built sync.Map // builtKey → *builtOnce

type builtKey struct{ outRoot, moduleDir, pkg string }

type builtOnce struct {
	once sync.Once
	bin  binary
	err  error
}

// bootstrap is the binary of package pkg of the module in moduleDir for a
// synth into outRoot: from the module's batch build when pkg is one of its
// Lambda mains, else from a build of its own beside the batch.
func bootstrap(moduleDir, pkg, outRoot string) (binary, error) {
	if abs, err := filepath.Abs(outRoot); err == nil {
		outRoot = abs
	}
	v, _ := built.LoadOrStore(builtKey{outRoot, moduleDir, path.Clean(pkg)}, &builtOnce{})
	b := v.(*builtOnce)
	b.once.Do(func() {
		batch := batchFor(moduleDir, outRoot)
		p, ok := batch.binary(pkg)
		if !ok {
			singleBuilds.Add(1)
			// Beside the batch folder, never in it: a package may be named
			// like any folder there.
			dir := filepath.Join(batch.dir+".single", strings.ReplaceAll(path.Clean(pkg), "/", "_"))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.err = err
				return
			}
			p = filepath.Join(dir, "bootstrap")
			args := goBuildArgs(pkg, p)
			if out, err := goCommand(moduleDir, args...).CombinedOutput(); err != nil {
				b.err = fmt.Errorf("go build %s in %s failed: %v\n%s", pkg, moduleDir, err, out)
				return
			}
		}
		b.bin.path = p
		b.bin.sum, b.err = fileSHA256(p)
	})
	return b.bin, b.err
}

func fileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// goCommand runs the go tool in dir for linux/arm64, outside any go.work:
// the module alone decides what is linked, as it does in CI.
func goCommand(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "GOWORK=off")
	return cmd
}

// LambdaRuntimePackage is what makes a main package a Lambda main for the
// batch build: it starts aws-lambda-go's runtime loop.
const LambdaRuntimePackage = "github.com/aws/aws-lambda-go/lambda"

// batch is one `go build` of every Lambda main of a module, into a folder
// beside CDK's bundling folders (in the cloud assembly's output directory,
// so it is reused by the next synth instead of piling up in /tmp). The
// folder is kept between synths: go build reads the build ID of a binary
// already there and links again only when its inputs changed, so a synth
// without Go changes links nothing.
//
// Why: CDK bundles assets one after another, and each `go build` of one
// package links alone; one invocation with every package compiles shared
// packages once and links the binaries in parallel. The binaries are those
// of a build of each package on its own (same flags and environment), so
// the asset hashes, which are of the output, do not change.
//
// The packages are discovered, not listed: every main package of the module
// that depends on LambdaRuntimePackage. A package outside the batch (a tool,
// a duplicate binary name) or a failed batch falls back to a build of the
// one package, so a compile error fails synth only for the function whose
// code is broken, with that package's compiler output.
type batch struct {
	once sync.Once
	dir  string
	bins map[string]string // "./cmd/x" → binary in dir
	err  error
}

var (
	batchesMu sync.Mutex
	batches   = map[string]*batch{}
	// singleBuilds counts builds of one package (a test hook: a Lambda
	// main of the batch must not need one).
	singleBuilds atomic.Int64
	// bundles counts TryBundle calls (a test hook: a synth whose binaries
	// did not change must copy none).
	bundles atomic.Int64
)

func batchFor(moduleDir, outRoot string) *batch {
	batchesMu.Lock()
	defer batchesMu.Unlock()
	if abs, err := filepath.Abs(outRoot); err == nil {
		outRoot = abs // Prebuild and TryBundle name one folder
	}
	dir := BatchDir(outRoot, moduleDir)
	b, ok := batches[dir]
	if !ok {
		b = &batch{dir: dir}
		batches[dir] = b
	}
	b.once.Do(func() { b.bins, b.err = buildBatch(moduleDir, dir) })
	return b
}

// Prebuild starts the batch build of the Lambda mains of the module in
// moduleDir for a synth into outdir (the cloud assembly directory, CDK_OUTDIR
// under the CLI) in the background, and returns at once. The build then runs
// on a core of its own while the app constructs its stacks, which only
// alternates between the app and the jsii kernel; the first function
// bundled waits for it instead of starting it. The goroutine makes no jsii
// call. A synth that bundles nothing wastes little: go build links nothing
// when the binaries in the folder are current.
func Prebuild(moduleDir, outdir string) {
	go batchFor(moduleDir, outdir)
}

// BatchDir is the folder a synth into outdir builds the Lambda mains of
// the module in moduleDir into (a test hook: it shows what was batched).
func BatchDir(outdir, moduleDir string) string {
	abs, err := filepath.Abs(moduleDir)
	if err != nil {
		abs = moduleDir
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(outdir, "gofunction-"+hex.EncodeToString(sum[:6]))
}

func (b *batch) binary(pkg string) (string, bool) {
	if b.err != nil {
		return "", false
	}
	bin, ok := b.bins[path.Clean(pkg)] // "./cmd/x" and "cmd/x" are one package
	return bin, ok
}

func buildBatch(moduleDir, dir string) (map[string]string, error) {
	list := goCommand(moduleDir, "go", "list", "-f",
		`{{if eq .Name "main"}}{{.ImportPath}}{{"\t"}}{{.Dir}}{{range .Deps}}{{if eq . "`+LambdaRuntimePackage+`"}}{{"\t"}}lambda{{end}}{{end}}{{"\n"}}{{end}}`, "./...")
	listed, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	byName := map[string][]string{} // binary name → packages
	for line := range strings.Lines(string(listed)) {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) != 3 {
			continue // not a Lambda main
		}
		rel, err := filepath.Rel(moduleDir, f[1])
		if err != nil {
			continue
		}
		name := path.Base(f[0])
		byName[name] = append(byName[name], filepath.ToSlash(rel))
	}
	bins := map[string]string{}
	var pkgs []string
	for name, ps := range byName {
		if len(ps) == 1 { // `go build -o dir/` names a binary by its package's last element
			bins[ps[0]] = filepath.Join(dir, name)
			pkgs = append(pkgs, "./"+ps[0])
		}
	}
	if len(pkgs) == 0 {
		return nil, nil
	}
	slices.Sort(pkgs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	args := goBuildArgs(pkgs[0], dir+string(filepath.Separator))
	args = append(args, pkgs[1:]...)
	if out, err := goCommand(moduleDir, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bins, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
