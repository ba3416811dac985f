// Package credentialsapi is AgenticPM's credentials API function
// (agenticpm-credentials): package agenticpm's integration routes with
// the SDK's KMS client, whose Encrypt seals integration credentials. Only
// this function links the client and may encrypt with the stage's
// credentials key (docs/schemas/agenticpm.md, decisions 10 and 22).
package credentialsapi

import (
	"context"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// Function is the binding cmd/agenticpm-credentials runs in Lambda.
func Function() fn.Binding { return fn.HTTP(contract.Credentials, New) }

// Functions lists the functions bound in this package: services.Functions
// gathers every package's list, so a new function of this package is
// listed here, once.
func Functions() []fn.Binding { return []fn.Binding{Function()} }

// New builds the credentials API from its function's environment:
// agenticpm.NewConfig plus, with a credentials key, the KMS client (its
// endpoint overridable by AWS_ENDPOINT_URL_KMS, as the local runner does).
func New(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (http.Handler, error) {
	cfg, err := agenticpm.NewConfig(ctx, getenv, opts...)
	if err != nil {
		return nil, err
	}
	if cfg.CredentialsKey != "" {
		awsCfg, err := awsconf.For(ctx, getenv, kms.ServiceID)
		if err != nil {
			return nil, err
		}
		cfg.KMS = KMS(awsCfg)
	}
	return agenticpm.NewCredentialsHandler(cfg), nil
}

// KMS is KMS's Encrypt with cfg (awsconf.For(…, kms.ServiceID) in the
// function), over the SDK's KMS client.
func KMS(cfg aws.Config) agenticpm.KMSAPI { return encrypter{kms.NewFromConfig(cfg)} }

type encrypter struct{ c *kms.Client }

func (e encrypter) Encrypt(ctx context.Context, keyID string, plaintext []byte, ec map[string]string) ([]byte, string, error) {
	out, err := e.c.Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(keyID), Plaintext: plaintext, EncryptionContext: ec})
	if err != nil {
		return nil, "", err
	}
	return out.CiphertextBlob, aws.ToString(out.KeyId), nil
}
