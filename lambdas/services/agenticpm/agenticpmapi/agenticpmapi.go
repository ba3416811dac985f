// Package agenticpmapi is AgenticPM's HTTP API function: package
// agenticpm's handler with what only the API uses, the JSON Schema
// implementation it checks artefact content with (platform/bodyschema)
// and the SDK's KMS client, whose Encrypt seals integration credentials.
// The binding lives here, not in package agenticpm, so that the release
// job's bootstrap, which links package agenticpm and neither validates
// content nor encrypts, does not link them (docs/functions.md, "Cold
// start").
package agenticpmapi

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/bodyschema"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// Function is the API's binding: cmd/agenticpm runs it in Lambda.
func Function() fn.Binding { return fn.HTTP(contract.API, New) }

// Functions lists the functions bound in this package:
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{Function()} }

// New builds the API from its function's environment: agenticpm.NewConfig
// plus, with a credentials key, the KMS client (its endpoint overridable
// by AWS_ENDPOINT_URL_KMS, as the local runner does).
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
	return NewHandler(cfg), nil
}

// NewHandler is agenticpm.NewHandler with ContentSchemas.
func NewHandler(cfg agenticpm.Config) http.Handler {
	return agenticpm.NewHandler(cfg, ContentSchemas())
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

// ContentSchemas returns platform/bodyschema as agenticpm.ContentSchemas:
// the artefact schemas of the repository (agenticpm.ArtefactSchema), each
// compiled with its formats asserted on its first use, not at init:
// compiling the four took about 3 ms (1 MB in 14,000 allocations) of every
// API cold start. A schema that does not compile fails every test
// (TestEveryArtefactSchemaCompiles) and panics on its first use.
func ContentSchemas() agenticpm.ContentSchemas { return contentSchemas{} }

type contentSchemas struct{}

func (contentSchemas) Check(v *api.Validator, field string, t agenticpm.ArtefactType, value any) {
	if compiled := artefactSchemas[t]; compiled != nil {
		compiled().Check(v, field, value)
	}
}

// artefactSchemas holds each type's compile-once function.
var artefactSchemas = func() map[agenticpm.ArtefactType]func() *bodyschema.Schema {
	out := make(map[agenticpm.ArtefactType]func() *bodyschema.Schema, len(agenticpm.ArtefactTypes))
	for _, t := range agenticpm.ArtefactTypes {
		out[t] = sync.OnceValue(func() *bodyschema.Schema {
			s, err := compileSchema(t)
			if err != nil {
				panic(err.Error())
			}
			return s
		})
	}
	return out
}()

// compileSchema compiles the schema of t.
func compileSchema(t agenticpm.ArtefactType) (*bodyschema.Schema, error) {
	b := agenticpm.ArtefactSchema(t)
	if b == nil {
		return nil, fmt.Errorf("agenticpm: artefact schema of %s: no schemas/%s.json", t, t)
	}
	s, err := bodyschema.Compile(b, bodyschema.AssertFormats())
	if err != nil {
		return nil, fmt.Errorf("agenticpm: artefact schema of %s: %w", t, err)
	}
	return s, nil
}
