// Package ddb is the DynamoDB plumbing every service shares: a client
// configured from the environment, sentinel errors with predicates in place
// of SDK exception types, and the item-size arithmetic behind the 400 KB
// item limit.
package ddb

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Environment variables read by NewClient.
const (
	// EnvEndpoint points the client at another endpoint, e.g. DynamoDB Local.
	EnvEndpoint = "DYNAMODB_ENDPOINT"
	// EnvRegion is the standard SDK region variable.
	EnvRegion = "AWS_REGION"
	// DefaultRegion is used when AWS_REGION is unset.
	DefaultRegion = "us-east-1"
)

// NewClient returns a DynamoDB client configured from getenv (os.Getenv in
// production; a map lookup in tests and in the local runner, which is why it
// is a parameter). Credentials otherwise follow the SDK default chain.
//
// With DYNAMODB_ENDPOINT set and no AWS_ACCESS_KEY_ID, static dummy
// credentials are used: DynamoDB Local needs a signature but checks nothing,
// and a developer machine should not reach for real credentials (or hang on
// IMDS) just to talk to it.
func NewClient(ctx context.Context, getenv func(string) string) (*dynamodb.Client, error) {
	region := getenv(EnvRegion)
	if region == "" {
		region = DefaultRegion
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(region)}
	endpoint := getenv(EnvEndpoint)
	if endpoint != "" && getenv("AWS_ACCESS_KEY_ID") == "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("ddb: load AWS config: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			// DynamoDB Local sends X-Amz-Crc32 values that do not match
			// some error bodies, and the SDK logs a warning for each.
			o.DisableValidateResponseChecksum = true
		}
		clientHooks.mu.Lock()
		hooks := clientHooks.hooks
		clientHooks.mu.Unlock()
		for _, h := range hooks {
			h.fn(getenv, o)
		}
	}), nil
}

// A ClientHook adjusts the options of every client NewClient makes, with
// the getenv the client was made from.
type ClientHook func(getenv func(string) string, o *dynamodb.Options)

type hook struct{ fn ClientHook }

var clientHooks struct {
	mu    sync.Mutex
	hooks []*hook // replaced, never changed in place: NewClient reads it unlocked
}

// AddClientHook makes every later NewClient call h. It is the seam the
// dev-only tools use to instrument the clients that service constructors
// make for themselves, attributed to a function by its getenv
// (DYNASTACK_SERVICE): the recorder of the calls each function makes
// (devtools/ddbrecord, when DYNASTACK_CALLS_DIR is set) in test binaries
// and the local runner. Lambda binaries install none. The returned
// function removes h.
func AddClientHook(h ClientHook) (remove func()) {
	entry := &hook{h}
	clientHooks.mu.Lock()
	defer clientHooks.mu.Unlock()
	clientHooks.hooks = append(slices.Clone(clientHooks.hooks), entry)
	return func() {
		clientHooks.mu.Lock()
		defer clientHooks.mu.Unlock()
		clientHooks.hooks = slices.DeleteFunc(slices.Clone(clientHooks.hooks), func(e *hook) bool { return e == entry })
	}
}
