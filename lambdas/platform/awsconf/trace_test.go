package awsconf_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// A call made with an invocation's or a record's context sends its trace
// header as X-Amzn-Trace-Id, whatever the process environment says; with
// none in the context, _X_AMZN_TRACE_ID. The "sdk" cases pin what the
// SDK's own recursion detection does without awsconf's middleware
// (aws/middleware/recursion_detection.go): the variable, in a Lambda
// environment only, and never the context's.
func TestTraceHeaderSent(t *testing.T) {
	const (
		invocation = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
		message    = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad9;Sampled=1"
		process    = "Root=1-00000001-000000000000000000000001;Parent=0000000000000001;Sampled=0"
	)
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("X-Amzn-Trace-Id"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(`<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>m-1</MessageId></PublishResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></PublishResponse>`))
	}))
	defer srv.Close()
	env := map[string]string{"AWS_ENDPOINT_URL_SNS": srv.URL}
	cfg, err := awsconf.For(context.Background(), func(k string) string { return env[k] }, sns.ServiceID)
	require.NoError(t, err)
	sdkOnly := cfg.Copy()
	sdkOnly.APIOptions = nil
	client, sdk := sns.NewFromConfig(cfg), sns.NewFromConfig(sdkOnly)
	inv := logx.WithInvocationTrace(context.Background(), invocation)
	for _, tc := range []struct {
		name        string
		sdkOnly     bool
		ctx         context.Context
		lambda, env string // AWS_LAMBDA_FUNCTION_NAME, _X_AMZN_TRACE_ID
		want        string
	}{
		{"the invocation's", false, inv, "", "", invocation},
		{"a record's", false, logx.WithTrace(inv, message), "", "", message},
		{"the context's over the environment's", false, inv, "fn", process, invocation},
		{"the environment's in Lambda", false, context.Background(), "fn", process, process},
		// logx's fallback: the header of the trace the lines log.
		{"the environment's outside Lambda too", false, context.Background(), "", process, process},
		{"none", false, context.Background(), "", "", ""},
		{"sdk: the environment's in Lambda", true, context.Background(), "fn", process, process},
		{"sdk: the environment's, not the context's", true, inv, "fn", process, process},
		{"sdk: none outside Lambda", true, inv, "", process, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range map[string]string{"AWS_LAMBDA_FUNCTION_NAME": tc.lambda, logx.EnvTraceID: tc.env} {
				t.Setenv(k, v)
				if v == "" {
					require.NoError(t, os.Unsetenv(k)) // the SDK tests presence, not value
				}
			}
			mu.Lock()
			got = nil
			mu.Unlock()
			c := client
			if tc.sdkOnly {
				c = sdk
			}
			_, err := c.Publish(tc.ctx, &sns.PublishInput{TopicArn: aws.String("arn:aws:sns:us-east-1:123456789012:t"), Message: aws.String("m")})
			require.NoError(t, err)
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, []string{tc.want}, got, "X-Amzn-Trace-Id of the publish")
		})
	}
}
