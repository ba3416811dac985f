// Package kmslocal starts and stops Local KMS (github.com/nsmithuk/local-kms,
// a KMS emulator speaking the real JSON protocol) for tests and the local
// runner, as ddblocal does DynamoDB Local: the binary the Makefile
// installs with `go install` at Version, on a free port, with its data in
// a temporary directory, its process in its own group and killed with its
// parent.
package kmslocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/ready"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
)

// Version is the local-kms module version the Makefile installs (the
// module has no semver tag).
const Version = "v0.0.0-20260228092603-2a5e92d09ab6"

// EnvBinary names a local-kms binary to use instead of the Makefile's.
const EnvBinary = "LOCAL_KMS"

// EnvEndpoint is the SDK's variable for KMS's endpoint: set, a client
// talks to that server.
var EnvEndpoint = awsconf.EndpointVar(kms.ServiceID)

// ErrNoBinary: local-kms is not installed; the message says how.
var ErrNoBinary = errors.New("kmslocal: local-kms not found: run `make bin/local-kms-" + Version + "` at the repository root (or `go install github.com/nsmithuk/local-kms@" + Version + "` and put it on PATH, or set " + EnvBinary + ")")

// Find returns the local-kms binary: $LOCAL_KMS, else the Makefile's
// bin/local-kms-<Version> under root, else local-kms on PATH, else in
// $GOPATH/bin (where a plain go install puts it).
func Find(root string) (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		return p, nil
	}
	candidates := []string{filepath.Join(root, "bin", "local-kms-"+Version)}
	if p, err := exec.LookPath("local-kms"); err == nil {
		candidates = append(candidates, p)
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	candidates = append(candidates, filepath.Join(gopath, "bin", "local-kms"))
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
			return c, nil
		}
	}
	return "", ErrNoBinary
}

// Options configure Start. The zero value is usable.
type Options struct {
	// Root is the repository root; found from the working directory when
	// empty.
	Root string
	// Output receives the server's log; discarded when nil.
	Output io.Writer
	// Region of the keys' ARNs; eu-central-1 when empty.
	Region string
}

// Server is a running Local KMS.
type Server struct {
	// Endpoint is the URL for AWS_ENDPOINT_URL_KMS.
	Endpoint string

	cmd       *exec.Cmd
	dir       string
	done      chan struct{}
	waitErr   error
	closeOnce sync.Once
}

// Start launches local-kms and waits until it answers ListKeys.
func Start(ctx context.Context, opts Options) (*Server, error) {
	root := opts.Root
	if root == "" {
		var err error
		if root, err = repo.Root(""); err != nil {
			return nil, fmt.Errorf("kmslocal: %w", err)
		}
	}
	bin, err := Find(root)
	if err != nil {
		return nil, err
	}
	return ddblocal.OnFreePort(func(port int) (*Server, bool, error) { return launch(ctx, bin, port, opts) })
}

// launch starts local-kms on port and waits for it; exited says it ended
// before it was ready.
func launch(ctx context.Context, bin string, port int, opts Options) (s *Server, exited bool, err error) {
	dir, err := os.MkdirTemp("", "local-kms-")
	if err != nil {
		return nil, false, err
	}
	region := opts.Region
	if region == "" {
		region = "eu-central-1"
	}
	cmd := exec.Command(bin)
	// No seed file (its default path is /init/seed.yaml): keys are made
	// with the API, as the template declares them (CreateAlias).
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "KMS_DATA_PATH="+dir,
		"KMS_SEED_PATH="+filepath.Join(dir, "no-seed.yaml"), "KMS_REGION="+region, "KMS_ACCOUNT_ID=111122223333")
	out := opts.Output
	if out == nil {
		out = io.Discard
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, false, fmt.Errorf("kmslocal: start %s: %w", bin, err)
	}
	s = &Server{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, dir: dir, done: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx, 30*time.Second); err != nil {
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

// Client returns a KMS client of this server.
func (s *Server) Client(ctx context.Context) (*kms.Client, error) { return Client(ctx, s.Endpoint) }

// Client returns a KMS client of the server at endpoint, with the dummy
// credentials the dev tools use.
func Client(ctx context.Context, endpoint string) (*kms.Client, error) {
	cfg, err := Config(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return kms.NewFromConfig(cfg), nil
}

// Config is the AWS configuration of Client: the server at endpoint as
// KMS's BaseEndpoint, the dummy credentials the dev tools use. Code that
// builds its own KMS client from an aws.Config (agenticpmapi.KMS) takes
// it.
func Config(ctx context.Context, endpoint string) (aws.Config, error) {
	getenv := func(k string) string {
		if k == EnvEndpoint {
			return endpoint
		}
		return ""
	}
	return awsconf.For(ctx, getenv, kms.ServiceID)
}

func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	client, err := s.Client(ctx)
	if err != nil {
		return err
	}
	err = ready.Wait(ctx, timeout, 50*time.Millisecond, s.done, func() error { return s.waitErr }, func(ctx context.Context) error {
		_, err := client.ListKeys(ctx, &kms.ListKeysInput{}, func(o *kms.Options) { o.RetryMaxAttempts = 1 })
		return err
	})
	if err != nil {
		return fmt.Errorf("kmslocal: local-kms at %s: %w", s.Endpoint, err)
	}
	return nil
}

// EnsureKey makes alias name a symmetric key of its own, as the stack's
// AWS::KMS::Key and its AWS::KMS::Alias do, unless the alias exists; it
// returns the key's ARN. Concurrent callers may each create a key, and one
// alias wins: every caller gets the ARN the alias names.
func EnsureKey(ctx context.Context, client *kms.Client, alias string) (string, error) {
	if out, err := client.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(alias)}); err == nil {
		return aws.ToString(out.KeyMetadata.Arn), nil
	}
	key, err := client.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("dynastack local: " + alias),
		KeySpec: kmstypes.KeySpecSymmetricDefault, KeyUsage: kmstypes.KeyUsageTypeEncryptDecrypt})
	if err != nil {
		return "", fmt.Errorf("kmslocal: create key for %s: %w", alias, err)
	}
	_, aerr := client.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String(alias), TargetKeyId: key.KeyMetadata.KeyId})
	out, err := client.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(alias)})
	if err != nil {
		return "", fmt.Errorf("kmslocal: alias %s: %w", alias, errors.Join(aerr, err))
	}
	return aws.ToString(out.KeyMetadata.Arn), nil
}

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Close stops the server (SIGTERM to its group, SIGKILL after five
// seconds) and removes its data.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		ready.Stop(s.cmd.Process.Pid, s.done)
		_ = os.RemoveAll(s.dir)
	})
	return nil
}
