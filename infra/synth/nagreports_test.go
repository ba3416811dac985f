package synth_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/infra/stacks"
	"github.com/dynastack/dynastack/infra/synth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cdk-nag, as stacks.ApplyPolicy adds it, writes its CSV reports only when
// NagReportsContext asks for them, and a synth without them removes those of
// an earlier one (as app/main.go does); its findings are annotations either
// way.
func TestNagReportsOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		context any
		reports int
	}{{nil, 0}, {"false", 0}, {"true", 2}, {true, 2}} {
		out := t.TempDir()
		stale := filepath.Join(out, "AwsSolutions-old-NagReport.csv")
		require.NoError(t, os.WriteFile(stale, []byte("Rule ID\n"), 0o644))
		ctx := cdktest.TestContext(t, false)
		ctx["@aws-cdk/core:failSynthOnValidationErrors"] = false // the CLI's setting: findings go to the report
		if tc.context != nil {
			ctx[synth.NagReportsContext] = tc.context
		}
		app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(out)})
		require.NoError(t, synth.RemoveStaleNagReports(app))
		stack := awscdk.NewStack(app, jsii.String("svc"), nil)
		stacks.ApplyPolicy(stack)
		awssqs.NewQueue(stack, jsii.String("Queue"), nil) // no DLQ, no TLS policy: AwsSolutions-SQS3, -SQS4
		asm := app.Synth(nil)
		if tc.reports > 0 {
			os.Remove(stale) // kept when reports are written: cdk-nag rewrites its own
		}
		csv, _ := filepath.Glob(filepath.Join(out, "*-NagReport.csv"))
		assert.Len(t, csv, tc.reports, "%s=%v: reports (AwsSolutions and Serverless)", synth.NagReportsContext, tc.context)
		assert.Contains(t, strings.Join(synth.AnnotationErrors(asm), "\n"), "AwsSolutions-SQS3", "%s=%v: no error annotation for a queue without a dead-letter queue", synth.NagReportsContext, tc.context)
	}
}
