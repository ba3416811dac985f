// Package testenv is the test harness shared by every package that talks to
// DynamoDB: one DynamoDB Local per test binary, tables created from the
// CloudFormation templates under isolated names, and the template lookup
// that prefers the CDK golden snapshot.
//
// Use it from TestMain so the server is stopped when the binary ends:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
//
// With AWS_ENDPOINT_URL_DYNAMODB set, that endpoint is used and nothing is
// started,
// e.g. to run several packages against one long-lived DynamoDB Local.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/dynastack/dynastack/constructs/service"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/kmslocal"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/dynastack/dynastack/lambdas"

var shared struct {
	once     sync.Once
	endpoint string
	server   *ddblocal.Server
	err      error
}

// sharedKMS is the test binary's Local KMS, started on first use.
var sharedKMS struct {
	once     sync.Once
	endpoint string
	server   *kmslocal.Server
	err      error
}

// Main runs m and stops the DynamoDB Local that the tests started, if any.
// With DYNASTACK_CALLS_DIR set it records, in a file of that directory,
// the permissions every DynamoDB request of a function's client needed
// (ServiceClient, or a service's constructor given ServiceEnv and
// ddbrecord.ClientOptions) and where each table
// CreateTables made comes from; test/iamcalls checks them against each
// function's IAM policy.
func Main(m *testing.M) int {
	if err := ddbrecord.ResetPackageCallLogs(os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	stop, err := ddbrecord.StartCallLog(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		code = 1
	}
	if shared.server != nil {
		shared.server.Close()
	}
	if sharedKMS.server != nil {
		sharedKMS.server.Close()
	}
	return code
}

// KMSEndpoint returns the KMS endpoint for tests, starting Local KMS
// (kmslocal) on first use, or AWS_ENDPOINT_URL_KMS when set. A missing
// binary fails the test, as a missing DynamoDB Local does.
func KMSEndpoint(t testing.TB) string {
	t.Helper()
	sharedKMS.once.Do(func() {
		if ep := os.Getenv(kmslocal.EnvEndpoint); ep != "" {
			sharedKMS.endpoint = ep
			return
		}
		var out io.Writer
		if os.Getenv("KMSLOCAL_LOG") != "" {
			out = os.Stderr
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sharedKMS.server, sharedKMS.err = kmslocal.Start(ctx, kmslocal.Options{Output: out})
		if sharedKMS.err == nil {
			sharedKMS.endpoint = sharedKMS.server.Endpoint
		}
	})
	require.NoError(t, sharedKMS.err, "Local KMS is required for this test")
	return sharedKMS.endpoint
}

// KMSKey makes alias a key of the test binary's Local KMS (once) and
// returns the endpoint and the key's ARN.
func KMSKey(t testing.TB, alias string) (endpoint, arn string) {
	t.Helper()
	endpoint = KMSEndpoint(t)
	ctx := context.Background()
	c, err := kmslocal.Client(ctx, endpoint)
	require.NoError(t, err)
	arn, err = kmslocal.EnsureKey(ctx, c, alias)
	require.NoError(t, err)
	return endpoint, arn
}

// Endpoint returns the DynamoDB endpoint for tests, starting DynamoDB Local
// on first use. A missing java or jar fails the test (it does not skip):
// a green run must mean the data layer was exercised.
func Endpoint(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		if ep := os.Getenv(ddblocal.EnvEndpoint); ep != "" {
			// Read for Go's test cache (which records what tests read, not
			// TestMain): a result holds for this server's version only
			// (devtools/cmd/ddblocal sets both), and for the recording
			// Main started or not.
			_ = os.Getenv(ddblocal.EnvJar)
			_ = os.Getenv(ddbrecord.EnvCallsDir)
			shared.endpoint = ep
			return
		}
		var out io.Writer
		if os.Getenv("DDBLOCAL_LOG") != "" {
			out = os.Stderr
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.server, shared.err = ddblocal.Start(ctx, ddblocal.Options{Output: out})
		if shared.err == nil {
			shared.endpoint = shared.server.Endpoint
		}
	})
	require.NoError(t, shared.err, "DynamoDB Local is required for this test")
	return shared.endpoint
}

// Getenv returns a getenv for services under test: AWS_ENDPOINT_URL_DYNAMODB
// is the test endpoint, env supplies the rest, and nothing leaks in from
// the developer's shell. A function's constructor given it takes
// ddbrecord.ClientOptions of it too, so its requests are recorded (Main).
func Getenv(t testing.TB, env map[string]string) func(string) string {
	return ddblocal.WithEndpoint(Endpoint(t), func(k string) string { return env[k] })
}

// ServiceClient returns a DynamoDB client for the test endpoint made as
// the function whose DYNASTACK_SERVICE is function makes its own, for tests
// that configure a service by hand: its requests are recorded as that
// function's (see Main). Fixtures and assertions use Client.
func ServiceClient(t testing.TB, function string) *dynamodb.Client {
	t.Helper()
	getenv := Getenv(t, map[string]string{service.EnvFunction: function})
	c, err := ddb.NewClient(context.Background(), getenv, ddbrecord.ClientOptions(getenv)...)
	require.NoError(t, err)
	return c
}

// Client returns a DynamoDB client for the test endpoint.
func Client(t testing.TB) *dynamodb.Client {
	t.Helper()
	c, err := ddb.NewClient(context.Background(), Getenv(t, nil))
	require.NoError(t, err)
	return c
}

// Template returns the golden template test/snapshots/<stage>/<stack>
// .template.json: tests always run against the schema that deploys, so a
// renamed index or table breaks them. There is no fallback fixture on
// purpose.
func Template(t testing.TB, stage, stack string) string {
	t.Helper()
	root, err := repo.Root("")
	require.NoError(t, err)
	golden := filepath.Join(root, "test", "snapshots", stage, stack+cfntables.TemplateSuffix)
	_, err = os.Stat(golden)
	require.NoError(t, err, "no golden template for %s/%s at %s: run `make snapshots`", stage, stack, golden)
	return golden
}

// ModuleDir is the directory of the lambdas module.
func ModuleDir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module "+modulePath+"\n") {
			return d
		}
		require.NotEqual(t, d, filepath.Dir(d), "module %s not found above %s", modulePath, wd)
	}
}

// Suffix returns a random table-name suffix such as "-t3f9a0c12".
func Suffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "-t" + hex.EncodeToString(b)
}

// Tables creates the tables of the template at path under names unique to
// this test, deletes them when the test ends, and returns the template and
// logical id → table name.
func Tables(t testing.TB, path string) (*cfntables.Template, map[string]string) {
	t.Helper()
	tmpl, err := cfntables.Load(path)
	require.NoError(t, err)
	return tmpl, CreateTables(t, tmpl)
}

// CreateTables is Tables for a template already loaded (or edited).
func CreateTables(t testing.TB, tmpl *cfntables.Template) map[string]string {
	t.Helper()
	client := Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	names, err := cfntables.Create(ctx, client, tmpl, cfntables.Options{Suffix: Suffix()})
	t.Cleanup(func() {
		if err := cfntables.Delete(context.Background(), client, names); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
	require.NoError(t, err)
	require.NoError(t, ddbrecord.LogTables(tmpl, names))
	return names
}

// ServiceEnv returns the environment of the function of tmpl whose
// DYNASTACK_SERVICE is service, with table Refs resolved through names and
// topic Refs to their local ARNs (cfntables.TopicRefs).
func ServiceEnv(t testing.TB, tmpl *cfntables.Template, names map[string]string, service string) map[string]string {
	t.Helper()
	fns, err := tmpl.Functions()
	require.NoError(t, err)
	for _, fn := range fns {
		if fn.Service() != service {
			continue
		}
		env, err := fn.Environment(tmpl.LocalRefs(names))
		require.NoError(t, err)
		return env
	}
	require.FailNow(t, "no function", "template %s has no function with DYNASTACK_SERVICE=%s", tmpl.Path, service)
	return nil
}
