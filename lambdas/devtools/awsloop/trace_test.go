package awsloop_test

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// The SNS fake keeps the publish's X-Amzn-Trace-Id for the subscribed
// queue (SNS's AWSTraceHeader), and every fake records it with the call.
func TestSNSKeepsTheTraceHeader(t *testing.T) {
	const header = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"
	const topic = "arn:aws:sns:us-east-1:123456789012:t"
	f := awsloop.NewSNS()
	var mu sync.Mutex
	var got []awsloop.Publication
	f.AddTopic(topic, func(p awsloop.Publication) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
	})
	require.NoError(t, f.Start())
	defer f.Close()
	env := map[string]string{"AWS_ENDPOINT_URL_SNS": f.URL()}
	cfg, err := awsconf.For(context.Background(), func(k string) string { return env[k] }, sns.ServiceID)
	require.NoError(t, err)
	c := sns.NewFromConfig(cfg)
	ctx := logx.WithInvocationTrace(context.Background(), header)
	for _, ctx := range []context.Context{ctx, context.Background()} {
		_, err = c.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2, "publications")
	assert.Equal(t, header, got[0].TraceHeader, "traced publish: the publication's trace header")
	assert.Empty(t, got[1].TraceHeader, "untraced publish: the publication's trace header")
	calls := f.Calls()
	require.Len(t, calls, 2, "calls")
	assert.Equal(t, header, calls[0].TraceHeader, "traced publish: the call's trace header")
}
