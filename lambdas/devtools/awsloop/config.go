package awsloop

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Region is the region of Config.
const Region = "us-east-1"

// Config returns an aws.Config for clients of the loopback servers: static
// credentials with accessKeyID (and a derived secret), region us-east-1.
// Give each client its server with BaseEndpoint:
//
//	client := sts.NewFromConfig(awsloop.Config("caller"), func(o *sts.Options) {
//		o.BaseEndpoint = aws.String(fake.URL())
//	})
func Config(accessKeyID string) aws.Config {
	return aws.Config{
		Region:      Region,
		Credentials: credentials.NewStaticCredentialsProvider(accessKeyID, configSecret(accessKeyID), ""),
	}
}

// ConfigAt is Config with BaseEndpoint set to endpoint: the configuration
// of a client of one loopback server, for code that builds its client
// from an aws.Config alone (agenticpm.NewEvents, agenticpmapi.KMS).
func ConfigAt(accessKeyID, endpoint string) aws.Config {
	cfg := Config(accessKeyID)
	cfg.BaseEndpoint = aws.String(endpoint)
	return cfg
}

// NoBackoff is the SDK's standard retryer, the one the functions' clients
// have (its attempts, its retry token bucket, what it takes for retryable
// and for a throttle), without the waits between attempts: an aws.Config
// Retryer for tests that make a server throttle (Server.Inject), where a
// throttle's backoff, which starts at a second, would only slow them.
func NoBackoff() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
	})
}
