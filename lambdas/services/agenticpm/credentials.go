package agenticpm

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// KMSAPI is what the API needs of KMS: Encrypt, returning the ciphertext
// and the ARN of the key that made it (its role has no kms:Decrypt).
// agenticpmapi.KMS calls KMS (services/agenticpm/agenticpmapi, with the
// SDK's KMS client, which only the API links); the release job encrypts
// nothing.
type KMSAPI interface {
	Encrypt(ctx context.Context, keyID string, plaintext []byte, encryptionContext map[string]string) (ciphertext []byte, keyARN string, err error)
}

// MaxConfigBytes is KMS Encrypt's limit on plaintext.
const MaxConfigBytes = 4096

// ErrNoCredentialsKey: the function has no key to encrypt with; a
// deployment error (500), named so the log says which variable.
var ErrNoCredentialsKey = errors.New("agenticpm: " + contract.EnvCredentialsKey + " and " + service.EnvStage + " must be set to store integration credentials")

// CredentialsContext is the encryption context of an integration's
// credentials in a stage: what the key's users are granted under
// (constructs/agenticpm.CredentialsCondition) and what Decrypt needs.
func CredentialsContext(name Integration, stage string) map[string]string {
	return map[string]string{contract.ContextIntegration: string(name), contract.ContextStage: stage}
}

type sealed struct {
	ciphertext, keyID string
	context           map[string]string
}

// encryptCredentials encrypts plaintext with the credentials key under
// the integration's context. A KMS throttle or outage is a 503 like
// DynamoDB's; nothing about the plaintext reaches an error.
func (s *Store) encryptCredentials(ctx context.Context, name Integration, plaintext []byte) (sealed, error) {
	if s.kms == nil || s.credentialsKey == "" || s.stage == "" {
		return sealed{}, ErrNoCredentialsKey
	}
	ec := CredentialsContext(name, s.stage)
	blob, keyARN, err := s.kms.Encrypt(ctx, s.credentialsKey, plaintext, ec)
	if err != nil {
		if ddb.IsUnavailable(err) || isKMSUnavailable(err) {
			return sealed{}, fmt.Errorf("%w: kms Encrypt: %w", ddb.ErrUnavailable, err)
		}
		return sealed{}, fmt.Errorf("agenticpm: kms Encrypt with %s: %w", s.credentialsKey, err)
	}
	return sealed{ciphertext: base64.StdEncoding.EncodeToString(blob), keyID: keyARN, context: ec}, nil
}

// LegacyCredentialsError: an integration stored before the service
// encrypted credentials itself (decision 10): refused, not migrated.
type LegacyCredentialsError struct{ Integration Integration }

func (e *LegacyCredentialsError) Error() string {
	return fmt.Sprintf("agenticpm: integration %s holds credentials stored before they were encrypted by the service (no encryptionContext); PUT its plaintext config again", e.Integration)
}

func (e *LegacyCredentialsError) HTTPStatus() int                    { return http.StatusConflict }
func (e *LegacyCredentialsError) ErrorCode() string                  { return api.CodeConflict }
func (e *LegacyCredentialsError) PublicMessage(string, error) string { return public(e) }

// isKMSUnavailable reports KMS's own "try again later" errors (its
// throttles are ThrottlingException, which ddb.IsUnavailable knows), and
// any answer of 5xx: the SDK names one without an error code it knows
// UnknownError, which the codes alone would take for the caller's fault.
func isKMSUnavailable(err error) bool {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= 500 {
		return true
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "KMSInternalException", "DependencyTimeoutException", "KeyUnavailableException":
		return true
	}
	return false
}
