package synth

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/infra/controls"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cliApp is an app synthesized the way the CLI runs it: validation failures
// go into the report instead of failing the synth, so the app must read it.
func cliApp(t *testing.T, outdir string) awscdk.App {
	t.Helper()
	ctx := cdktest.TestContext(t, false)
	ctx["@aws-cdk/core:failSynthOnValidationErrors"] = false
	return awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(outdir), BuiltinCloudFormationValidation: jsii.Bool(false)})
}

// A queue without a dead-letter queue fails CT.SQS.PR.1; a property
// CloudFormation does not know fails its schema.
func nonCompliantStage(app awscdk.App) {
	// A concrete environment: an agnostic one hands the validator the
	// account and region as tokens, whose numbers differ between two apps
	// of one process, and a changed input is a cache miss.
	stage := awscdk.NewStage(app, jsii.String("prod"), &awscdk.StageProps{Env: &awscdk.Environment{Account: jsii.String("123456789012"), Region: jsii.String("eu-west-1")}})
	stack := awscdk.NewStack(stage, jsii.String("svc"), nil)
	q := awssqs.NewQueue(stack, jsii.String("Queue"), nil)
	q.Node().DefaultChild().(awscdk.CfnResource).AddPropertyOverride(jsii.String("Bogus"), 1)
}

func TestControlsAndValidationFailTheSynth(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	for _, tc := range []struct {
		name         string
		suppressions []controls.Suppression
		want, absent []string
	}{{
		name: "finding",
		// Nothing suppressed: CT.SQS.PR.1 is a violation on the queue.
		suppressions: []controls.Suppression{},
		want: []string{
			controlsPluginName + ": CT.SQS.PR.1: Require any Amazon SQS queue to have a dead-letter queue configured (prod/svc/Queue/Resource): Fix the resource, or suppress the control for it with a reason in infra/controls/suppressions.go.",
			"CloudFormation Validate: F3002: Bogus: Additional properties are not allowed ('Bogus' was unexpected) (prod/svc/Queue/Resource)",
		},
	}, {
		name:         "suppressed",
		suppressions: []controls.Suppression{{Control: "CT.SQS.PR.1", Type: "AWS::SQS::Queue", Reason: "test"}},
		want:         []string{"CloudFormation Validate: F3002"},
		absent:       []string{"CT.SQS.PR.1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			outdir := t.TempDir()
			var first []string
			// The second synth into the same cloud assembly reads both
			// verdicts from the cache: same errors, no template checked.
			for run, checked := range []int{1, 0} {
				app := cliApp(t, outdir)
				nonCompliantStage(app)
				ran := map[string]int{}
				addCachedValidation(app, filepath.Join(outdir, "checks", "validate"), func(_ time.Duration, n, _ int) { ran["validate"] = n })
				opts := controlsPackage(root)
				opts.Suppressions = tc.suppressions
				opts.CacheDir = filepath.Join(outdir, "checks", "controls")
				opts.Ran = func(_ time.Duration, n, _ int) { ran["controls"] = n }
				require.NoError(t, addControls(app, opts))
				asm := app.Synth(nil)
				errs, err := validationErrors(*asm.Directory())
				require.NoError(t, err)
				assert.Equal(t, checked, ran["validate"], "synth %d: templates checked by validate (%v)", run+1, ran)
				assert.Equal(t, checked, ran["controls"], "synth %d: templates checked by controls (%v)", run+1, ran)
				all := strings.Join(errs, "\n")
				for _, w := range tc.want {
					assert.Contains(t, all, w, "synth %d: validation errors", run+1)
				}
				for _, a := range tc.absent {
					assert.NotContains(t, all, a, "synth %d: validation errors", run+1)
				}
				if run == 0 {
					first = errs
				} else {
					assert.Equal(t, first, errs, "cached verdicts differ")
				}
			}
		})
	}
}

func TestControlsNeedTheRules(t *testing.T) {
	err := addControls(cliApp(t, t.TempDir()), controlsOptions{Package: t.TempDir(), Rules: "rules"})
	require.ErrorContains(t, err, "run make deps", "addControls without the npm package")
}

func TestValidationErrorsWithoutReport(t *testing.T) {
	errs, err := validationErrors(t.TempDir())
	require.NoError(t, err, "no report")
	require.Empty(t, errs, "no report: want nothing")
}

// A changed template is validated again, alone; the unchanged one keeps its
// cached verdict, and the report names both templates' violations.
func TestCachedValidationChecksOnlyChangedTemplates(t *testing.T) {
	outdir := t.TempDir()
	cache := filepath.Join(outdir, "checks", "validate")
	synth := func(extra bool) ([]string, int) {
		app := cliApp(t, outdir)
		stage := awscdk.NewStage(app, jsii.String("dev"), &awscdk.StageProps{Env: &awscdk.Environment{Account: jsii.String("123456789012"), Region: jsii.String("eu-west-1")}})
		for _, id := range []string{"a", "b"} {
			q := awssqs.NewQueue(awscdk.NewStack(stage, jsii.String(id), nil), jsii.String("Queue"), nil)
			q.Node().DefaultChild().(awscdk.CfnResource).AddPropertyOverride(jsii.String("Bogus"), 1)
			if id == "b" && extra {
				q.Node().DefaultChild().(awscdk.CfnResource).AddPropertyOverride(jsii.String("Other"), 1)
			}
		}
		validated := -1
		addCachedValidation(app, cache, func(_ time.Duration, n, _ int) { validated = n })
		errs, err := validationErrors(*app.Synth(nil).Directory())
		require.NoError(t, err)
		return errs, validated
	}
	_, n := synth(false)
	require.Equal(t, 2, n, "cold synth validated templates")
	errs, n := synth(true)
	assert.Equal(t, 1, n, "after changing b, templates validated")
	all := strings.Join(errs, "\n")
	for _, want := range []string{
		"F3002: Bogus: Additional properties are not allowed ('Bogus' was unexpected) (dev/a/Queue/Resource)",
		"F3002: Bogus: Additional properties are not allowed ('Bogus' was unexpected) (dev/b/Queue/Resource)",
		"F3002: Other: Additional properties are not allowed ('Other' was unexpected) (dev/b/Queue/Resource)",
	} {
		assert.Contains(t, all, want, "errors")
	}
}
