package stacks

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/infra/controls"
)

// cliApp is an app synthesized the way the CLI runs it: validation failures
// go into the report instead of failing the synth, so the app must read it.
func cliApp(t *testing.T) awscdk.App {
	t.Helper()
	path, err := cdktest.FindCDKJSON()
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := cdktest.Context(path, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx["@aws-cdk/core:failSynthOnValidationErrors"] = false
	return awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(t.TempDir())})
}

// A queue without a dead-letter queue fails CT.SQS.PR.1; a property
// CloudFormation does not know fails its schema.
func nonCompliantStage(app awscdk.App) {
	stage := awscdk.NewStage(app, jsii.String("prod"), nil)
	stack := awscdk.NewStack(stage, jsii.String("svc"), nil)
	q := awssqs.NewQueue(stack, jsii.String("Queue"), nil)
	q.Node().DefaultChild().(awscdk.CfnResource).AddPropertyOverride(jsii.String("Bogus"), 1)
}

func TestControlsAndValidationFailTheSynth(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		suppressions []controls.Suppression
		want, absent []string
	}{{
		name: "finding",
		// Nothing suppressed: CT.SQS.PR.1 is a violation on the queue.
		suppressions: []controls.Suppression{},
		want: []string{
			ControlsPluginName + ": CT.SQS.PR.1: Require any Amazon SQS queue to have a dead-letter queue configured (prod/svc/Queue/Resource): Fix the resource, or suppress the control for it with a reason in infra/controls/suppressions.go.",
			"CloudFormation Validate: F3002: Bogus: Additional properties are not allowed ('Bogus' was unexpected) (prod/svc/Queue/Resource)",
		},
	}, {
		name:         "suppressed",
		suppressions: []controls.Suppression{{Control: "CT.SQS.PR.1", Type: "AWS::SQS::Queue", Reason: "test"}},
		want:         []string{"CloudFormation Validate: F3002"},
		absent:       []string{"CT.SQS.PR.1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			app := cliApp(t)
			nonCompliantStage(app)
			// Test binaries run with CDK_VALIDATION=false, which turns off
			// the built-in validation; the same validator as a plugin shows
			// that its errors are read too.
			awscdk.Validations_Of(app).AddPlugins(awscdk.NewCloudFormationValidatePlugin(nil))
			opts := ControlsPackage(root)
			opts.Suppressions = tc.suppressions
			if err := AddControls(app, opts); err != nil {
				t.Fatal(err)
			}
			asm := app.Synth(nil)
			errs, err := ValidationErrors(*asm.Directory())
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(errs, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("validation errors lack %q; got:\n%s", w, all)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(all, a) {
					t.Errorf("validation errors name %q; got:\n%s", a, all)
				}
			}
		})
	}
}

func TestControlsNeedTheRules(t *testing.T) {
	err := AddControls(cliApp(t), ControlsOptions{Package: t.TempDir(), Rules: "rules"})
	if err == nil || !strings.Contains(err.Error(), "run make deps") {
		t.Fatalf("AddControls without the npm package: %v, want an error saying to run make deps", err)
	}
}

func TestValidationErrorsWithoutReport(t *testing.T) {
	if errs, err := ValidationErrors(t.TempDir()); err != nil || len(errs) != 0 {
		t.Fatalf("no report: %v, %v; want nothing", errs, err)
	}
}
