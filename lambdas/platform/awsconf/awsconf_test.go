package awsconf_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
)

func TestFor(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string // BaseEndpoint, "" for none
	}{
		{"no override", map[string]string{}, ""},
		{"the service's own", map[string]string{"AWS_ENDPOINT_URL_EVENTBRIDGE": "http://127.0.0.1:4001"}, "http://127.0.0.1:4001"},
		{"the global one", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:4002"}, "http://127.0.0.1:4002"},
		{"another service's", map[string]string{"AWS_ENDPOINT_URL_SNS": "http://127.0.0.1:4003"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := awsconf.For(context.Background(), func(k string) string { return tt.env[k] }, "EventBridge")
			require.NoError(t, err)
			assert.Equal(t, tt.want, aws.ToString(cfg.BaseEndpoint), "BaseEndpoint")
			if tt.want != "" {
				creds, err := cfg.Credentials.Retrieve(context.Background())
				assert.NoError(t, err, "an overridden endpoint without keys: credentials")
				assert.Equal(t, "local", creds.AccessKeyID, "an overridden endpoint without keys: the local dummies")
			}
		})
	}
}
