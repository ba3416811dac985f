// Package cdktest helps test constructs the way the CLI synthesizes them:
// with the feature flags and context of the project's cdk.json, and with
// assertion failures reported through testing.TB instead of panics.
package cdktest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/require"
)

// EnvTreeHash is the variable in which make test passes a hash of the
// repository's files. Go's test cache keys a result on the variables a
// test reads, but on the files it reads inside its own module only, and
// cdk.json (and what the tests synthesize from) is outside this one: a
// test that finds cdk.json reads this variable too, so its cached result
// holds for the same tree only (lambdas/devtools/repo and infra/config
// read it the same way; DEVELOPERS.md, "The test cache").
const EnvTreeHash = "DYNASTACK_TREE_HASH"

// FindCDKJSON walks up from the working directory to the nearest cdk.json.
func FindCDKJSON() (string, error) {
	_ = os.Getenv(EnvTreeHash)
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "cdk.json")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no cdk.json above the working directory: tests must synthesize with the project's feature flags")
		}
		dir = parent
	}
}

// Context returns the context of a cdk.json file plus the keys the CLI sets
// on every synth, so that metadata matches `cdk synth`. Without bundle,
// asset bundling is skipped for every stack.
func Context(cdkJSON string, bundle bool) (map[string]any, error) {
	raw, err := os.ReadFile(cdkJSON)
	if err != nil {
		return nil, err
	}
	var file struct {
		Context          map[string]any `json:"context"`
		VersionReporting *bool          `json:"versionReporting"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", cdkJSON, err)
	}
	ctx := file.Context
	if ctx == nil {
		ctx = map[string]any{}
	}
	ctx["aws:cdk:enable-path-metadata"] = true
	ctx["aws:cdk:enable-asset-metadata"] = true
	ctx["aws:cdk:version-reporting"] = file.VersionReporting == nil || *file.VersionReporting
	if !bundle {
		ctx["aws:cdk:bundling-stacks"] = []any{}
	}
	return ctx, nil
}

// TestContext is Context of the project's cdk.json, failing t when it
// cannot be read.
func TestContext(t testing.TB, bundle bool) map[string]any {
	t.Helper()
	path, err := FindCDKJSON()
	require.NoError(t, err)
	ctx, err := Context(path, bundle)
	require.NoError(t, err)
	return ctx
}

// NewApp returns an app with the project's context and no bundling.
func NewApp(t testing.TB) awscdk.App {
	t.Helper()
	ctx := TestContext(t, false)
	return awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(t.TempDir())})
}

// NewStack returns an environment-agnostic stack in a fresh app.
func NewStack(t testing.TB) awscdk.Stack {
	t.Helper()
	return awscdk.NewStack(NewApp(t), jsii.String("Test"), nil)
}

// Assert runs assertion calls and turns their panic into a test failure, so
// one failed check does not abort the other tests of the binary.
func Assert(t testing.TB, check func()) {
	t.Helper()
	require.NotPanics(t, check, "assertion failed")
}

// Template synthesizes stack and returns its template for assertions.
func Template(t testing.TB, stack awscdk.Stack) assertions.Template {
	t.Helper()
	var tmpl assertions.Template
	Assert(t, func() { tmpl = assertions.Template_FromStack(stack, nil) })
	return tmpl
}

// JSON synthesizes stack and returns its template as plain Go values.
func JSON(t testing.TB, stack awscdk.Stack) map[string]any {
	t.Helper()
	raw := *Template(t, stack).ToJSON()
	b, err := json.Marshal(raw)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
