package agenticpm_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/kmslocal"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/credentialsapi"
)

// decrypt is what an agent does with GET /integrations/{name}: Decrypt
// the ciphertext with the encryption context it names. In AWS its role
// is granted with agenticpm.GrantCredentialsDecrypt for that integration
// only (test/credentials_grant_test.go proves the policies); Local KMS
// checks the context itself, not IAM.
func decrypt(t *testing.T, ciphertext string, ec map[string]string) (string, error) {
	t.Helper()
	blob, err := base64.StdEncoding.DecodeString(ciphertext)
	require.NoError(t, err, "configEncrypted is not base64")
	c, err := kmslocal.Client(context.Background(), testenv.KMSEndpoint(t))
	require.NoError(t, err, "Local KMS client")
	out, err := c.Decrypt(context.Background(), &kms.DecryptInput{CiphertextBlob: blob, EncryptionContext: ec})
	if err != nil {
		return "", err
	}
	return string(out.Plaintext), nil
}

// PUT /integrations/{name} takes the plaintext, stores only KMS
// ciphertext under the stage's key and the context {integration, stage};
// the stored ciphertext decrypts with that context and with no other;
// neither the answer, the item nor the logs hold the plaintext.
func TestIntegrationCredentials(t *testing.T) {
	var logs bytes.Buffer
	s := newServiceWith(t, nil, func(cfg *agenticpm.Config) {
		cfg.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	_, keyARN := testenv.KMSKey(t, credentialsAlias)
	const plain = `{"baseUrl":"https://acme.atlassian.net","apiToken":"PLAINTEXT-TOKEN-7f3a"}`
	const marker = "PLAINTEXT-TOKEN-7f3a"

	apitest.WantError(t, s.Do(t, contract.GetIntegration.Method, contract.GetIntegration.URL("jira"), ""), 404, "not_found", "", "integration")
	var first, second agenticpm.IntegrationConfig
	r := s.MustRoute(t, 200, contract.PutIntegration, `{"config":`+plain+`,"status":"active","lastHealthCheck":"2026-02-04T10:00:00Z"}`, &first, "jira")
	require.NotContains(t, string(r.Body), marker, "the answer holds the plaintext")
	want := map[string]string{"integration": "jira", "stage": "dev"}
	assert.Equal(t, keyARN, first.KMSKeyID, "first: key")
	assert.Equal(t, want, first.EncryptionContext, "first: encryption context")
	assert.Equal(t, "2026-02-04T10:00:00.000000Z", first.LastHealthCheck, "first: lastHealthCheck")
	assert.Len(t, first.ID, 36, "first: id")
	item := s.raw(t, "INTEGRATION#jira", "CONFIG")
	raw := fmt.Sprint(item)
	require.NotContains(t, raw, marker, "the stored item holds plaintext")
	require.NotContains(t, raw, "apiToken", "the stored item holds plaintext")
	assert.Equal(t, first.ConfigEncrypted, item["configEncrypted"], "stored ciphertext differs from the answer's")
	got, err := decrypt(t, first.ConfigEncrypted, want)
	require.NoError(t, err, "decrypt with the stored context")
	require.Equal(t, plain, got, "decrypt with the stored context")
	for _, wrong := range []map[string]string{
		{"integration": "asana", "stage": "dev"},
		{"integration": "jira", "stage": "prod"},
		{"integration": "jira"},
		nil,
	} {
		p, err := decrypt(t, first.ConfigEncrypted, wrong)
		assert.Error(t, err, "decrypted with context %v: %q", wrong, p)
	}

	// Replace: id and createdAt kept, new ciphertext.
	s.MustRoute(t, 200, contract.PutIntegration, `{"config":{"apiToken":"other"},"status":"error"}`, &second, "jira")
	assert.Equal(t, first.ID, second.ID, "replace: id")
	assert.Equal(t, first.CreatedAt, second.CreatedAt, "replace: createdAt")
	assert.Equal(t, agenticpm.IntegrationError, second.Status, "replace: status")
	assert.Empty(t, second.LastHealthCheck, "replace: lastHealthCheck")
	assert.NotEqual(t, first.ConfigEncrypted, second.ConfigEncrypted, "replace: ciphertext")
	var read agenticpm.IntegrationConfig
	s.MustRoute(t, 200, contract.GetIntegration, "", &read, "jira")
	assert.Equal(t, second.ConfigEncrypted, read.ConfigEncrypted, "get: ciphertext")
	assert.Equal(t, keyARN, read.KMSKeyID, "get: key")
	assert.Equal(t, want, read.EncryptionContext, "get: encryption context")
	if p, err := decrypt(t, read.ConfigEncrypted, read.EncryptionContext); assert.NoError(t, err, "decrypt what GET returns") {
		assert.Equal(t, `{"apiToken":"other"}`, p, "decrypt what GET returns")
	}

	before := s.Digest(t)
	big := `{"k":"` + strings.Repeat("x", agenticpm.MaxConfigBytes) + `"}`
	for _, tt := range []struct {
		name, path, body string
		field            string
	}{
		{"bad name", contract.GetIntegration.URL("trello"), `{"config":` + plain + `,"status":"active"}`, "name"},
		{"old ciphertext field", contract.GetIntegration.URL("asana"), `{"configEncrypted":"c2VjcmV0","config":` + plain + `,"status":"active"}`, "configEncrypted"},
		{"missing config", contract.GetIntegration.URL("asana"), `{"status":"active"}`, "config"},
		{"config not an object", contract.GetIntegration.URL("asana"), `{"config":"` + marker + `","status":"active"}`, "config"},
		{"config too large for KMS", contract.GetIntegration.URL("asana"), `{"config":` + big + `,"status":"active"}`, "config"},
		{"bad status", contract.GetIntegration.URL("asana"), `{"config":` + plain + `,"status":"ok"}`, "status"},
		{"unknown field", contract.GetIntegration.URL("asana"), `{"config":` + plain + `,"status":"active","id":"x"}`, "id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "PUT", tt.path, tt.body)
			apitest.WantError(t, r, 400, "validation_failed", tt.field, "")
			assert.NotContains(t, string(r.Body), marker, "the answer echoes the plaintext")
		})
	}
	assert.Equal(t, before, s.Digest(t), "a refused PUT wrote")
	assert.NotContains(t, logs.String(), marker, "plaintext logged")
	assert.NotContains(t, logs.String(), "apiToken", "plaintext logged")
	assert.Contains(t, logs.String(), contract.GetIntegration.URL("jira"), "no access log captured; the check above proves nothing")
}

// An item stored the old way (ciphertext a client made, no encryption
// context) is refused, not migrated: the service cannot decrypt it (its
// role may only encrypt) and no agent is granted it. PUT replaces it.
func TestLegacyIntegrationRefused(t *testing.T) {
	s := newService(t, nil)
	s.putRaw(t, map[string]any{"PK": "INTEGRATION#asana", "SK": "CONFIG", "id": "3f1d7e3a-0000-4000-8000-0000000000aa",
		"integration": "asana", "configEncrypted": "c2VjcmV0", "status": "active",
		"createdAt": "2026-01-01T00:00:00.000000Z", "updatedAt": "2026-01-01T00:00:00.000000Z"})
	r := s.Do(t, contract.GetIntegration.Method, contract.GetIntegration.URL("asana"), "")
	apitest.WantError(t, r, 409, "conflict", "", "PUT its plaintext config again")
	assert.NotContains(t, string(r.Body), "c2VjcmV0", "the refusal echoes the old ciphertext")
	var c agenticpm.IntegrationConfig
	s.MustRoute(t, 200, contract.PutIntegration, `{"config":{"token":"t"},"status":"active"}`, &c, "asana")
	assert.Equal(t, "3f1d7e3a-0000-4000-8000-0000000000aa", c.ID, "replaced: id")
	assert.Len(t, c.EncryptionContext, 2, "replaced: encryption context")
	s.MustRoute(t, 200, contract.GetIntegration, "", nil, "asana")
}

// Without a key the route fails as a deployment error (500, the variable
// in the log); with KMS unreachable it is a 503 like DynamoDB's; with its
// UpdateItem answer lost the retry writes the same item.
func TestIntegrationFailures(t *testing.T) {
	var logs bytes.Buffer
	s := newServiceWith(t, nil, func(cfg *agenticpm.Config) {
		cfg.KMS, cfg.CredentialsKey = nil, ""
		cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	apitest.WantError(t, s.Do(t, contract.PutIntegration.Method, contract.PutIntegration.URL("jira"), `{"config":{"a":"b"},"status":"active"}`), 500, "internal", "", "")
	assert.Contains(t, logs.String(), contract.EnvCredentialsKey, "the log does not name the variable")

	down := newServiceWith(t, nil, func(cfg *agenticpm.Config) {
		c, err := kmslocal.Config(context.Background(), "http://127.0.0.1:1")
		require.NoError(t, err, "KMS client")
		c.Retryer = func() aws.Retryer { return retry.AddWithMaxAttempts(retry.NewStandard(), 1) }
		cfg.KMS = credentialsapi.KMS(c)
	})
	r := down.Do(t, contract.PutIntegration.Method, contract.PutIntegration.URL("jira"), `{"config":{"a":"b"},"status":"active"}`)
	apitest.WantError(t, r, 503, "unavailable", "", "")
	assert.Equal(t, 0, down.Count(t), "items written without a ciphertext")

	// KMS throttling past the SDK's retries, and KMS failing on its side
	// (a 5xx without an error code the SDK knows): 503 too.
	for _, e := range []*awsloop.Error{awsloop.KMSService.Throttle(), {Status: 503}} {
		kmsSrv := awsloop.NewServer(awsloop.KMSService)
		kmsSrv.Inject("Encrypt", -1, e)
		require.NoError(t, kmsSrv.Start(), "loopback KMS")
		t.Cleanup(func() { _ = kmsSrv.Close() })
		refusing := newServiceWith(t, nil, func(cfg *agenticpm.Config) {
			c := awsloop.ConfigAt("AKIDAGENTICPM", kmsSrv.URL())
			c.Retryer = awsloop.NoBackoff
			cfg.KMS = credentialsapi.KMS(c)
		})
		apitest.WantError(t, refusing.Do(t, contract.PutIntegration.Method, contract.PutIntegration.URL("jira"), `{"config":{"a":"b"},"status":"active"}`), 503, "unavailable", "", "")
		assert.Len(t, kmsSrv.CallsOf("Encrypt"), retry.DefaultMaxAttempts, "KMS answering %d %s: Encrypt attempts, the SDK's", e.Status, e.Code)
	}

	ok := newService(t, nil)
	client, proxy := servicetest.FaultyClient(t, "agenticpm")
	cfg := ok.cfg
	cfg.Client = client
	lossy := ok.Service
	lossy.H = newAPI(cfg)
	proxy.NextOn("UpdateItem", ddbfault.DropAnswer, 1)
	var c agenticpm.IntegrationConfig
	lossy.MustRoute(t, 200, contract.PutIntegration, `{"config":{"a":"b"},"status":"active"}`, &c, "outlook")
	if p, err := decrypt(t, c.ConfigEncrypted, c.EncryptionContext); assert.NoError(t, err, "after a lost answer") {
		assert.Equal(t, `{"a":"b"}`, p, "after a lost answer")
	}
	assert.Equal(t, 1, proxy.Faults(), "faults")
}

// The IAM condition lists the contract's integrations; the API accepts
// its own: one list, or an integration could be stored that no agent may
// decrypt.
func TestContractIntegrationsMatch(t *testing.T) {
	var own []string
	for _, i := range agenticpm.Integrations {
		own = append(own, string(i))
	}
	assert.Equal(t, contract.Integrations, own, "service integrations against the contract's (IAM condition)")
	ec := agenticpm.CredentialsContext(agenticpm.IntegrationJira, "dev")
	assert.Equal(t, map[string]string{contract.ContextIntegration: "jira", contract.ContextStage: "dev"}, ec, "context")
}
