package stacks

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
)

// cdk-nag writes its CSV reports only when NagReportsContext asks for them;
// its findings are annotations either way.
func TestNagReportsOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		context any
		reports int
	}{{nil, 0}, {"false", 0}, {"true", 2}, {true, 2}} {
		out := t.TempDir()
		ctx := cdktest.TestContext(t, false)
		ctx["@aws-cdk/core:failSynthOnValidationErrors"] = false // the CLI's setting: findings go to the report
		if tc.context != nil {
			ctx[NagReportsContext] = tc.context
		}
		app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(out)})
		stack := awscdk.NewStack(app, jsii.String("svc"), nil)
		ApplyPolicy(stack)
		awssqs.NewQueue(stack, jsii.String("Queue"), nil) // no DLQ, no TLS policy: AwsSolutions-SQS3, -SQS4
		asm := app.Synth(nil)
		csv, _ := filepath.Glob(filepath.Join(out, "*-NagReport.csv"))
		if len(csv) != tc.reports {
			t.Errorf("%s=%v: reports %v, want %d (AwsSolutions and Serverless)", NagReportsContext, tc.context, csv, tc.reports)
		}
		if errs := SynthErrors(asm); !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, "AwsSolutions-SQS3") }) {
			t.Errorf("%s=%v: no error annotation for a queue without a dead-letter queue", NagReportsContext, tc.context)
		}
	}
}
