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

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/kmslocal"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/agenticpmapi"
)

// decrypt is what an agent granted agenticpm.GrantCredentialsDecrypt
// does with GET /integrations/{name}: Decrypt the ciphertext with the
// encryption context it names.
func decrypt(t *testing.T, ciphertext string, ec map[string]string) (string, error) {
	t.Helper()
	blob, err := base64.StdEncoding.DecodeString(ciphertext)
	if err != nil {
		t.Fatalf("configEncrypted is not base64: %v", err)
	}
	c, err := kmslocal.Client(context.Background(), testenv.KMSEndpoint(t))
	if err != nil {
		t.Fatal(err)
	}
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

	apitest.WantError(t, s.Do(t, "GET", "/integrations/jira", ""), 404, "not_found", "", "integration")
	var first, second agenticpm.IntegrationConfig
	r := s.Must(t, 200, "PUT", "/integrations/jira", `{"config":`+plain+`,"status":"active","lastHealthCheck":"2026-02-04T10:00:00Z"}`, &first)
	if strings.Contains(string(r.Body), marker) {
		t.Fatalf("the answer holds the plaintext: %s", r.Body)
	}
	want := map[string]string{"integration": "jira", "stage": "dev"}
	if first.KMSKeyID != keyARN || fmt.Sprint(first.EncryptionContext) != fmt.Sprint(want) || first.LastHealthCheck != "2026-02-04T10:00:00.000000Z" || len(first.ID) != 36 {
		t.Errorf("first %+v (key %s)", first, keyARN)
	}
	item := s.raw(t, "INTEGRATION#jira", "CONFIG")
	if raw := fmt.Sprint(item); strings.Contains(raw, marker) || strings.Contains(raw, "apiToken") {
		t.Fatalf("the stored item holds plaintext: %s", raw)
	}
	if item["configEncrypted"] != first.ConfigEncrypted {
		t.Errorf("stored ciphertext differs from the answer's")
	}
	got, err := decrypt(t, first.ConfigEncrypted, want)
	if err != nil || got != plain {
		t.Fatalf("decrypt with the stored context: %q, %v", got, err)
	}
	for _, wrong := range []map[string]string{
		{"integration": "asana", "stage": "dev"},
		{"integration": "jira", "stage": "prod"},
		{"integration": "jira"},
		nil,
	} {
		if p, err := decrypt(t, first.ConfigEncrypted, wrong); err == nil {
			t.Errorf("decrypted with context %v: %q", wrong, p)
		}
	}

	// Replace: id and createdAt kept, new ciphertext.
	s.Must(t, 200, "PUT", "/integrations/jira", `{"config":{"apiToken":"other"},"status":"error"}`, &second)
	if second.ID != first.ID || second.CreatedAt != first.CreatedAt || second.Status != agenticpm.IntegrationError || second.LastHealthCheck != "" || second.ConfigEncrypted == first.ConfigEncrypted {
		t.Errorf("replace %+v", second)
	}
	var read agenticpm.IntegrationConfig
	s.Must(t, 200, "GET", "/integrations/jira", "", &read)
	if read.ConfigEncrypted != second.ConfigEncrypted || read.KMSKeyID != keyARN || fmt.Sprint(read.EncryptionContext) != fmt.Sprint(want) {
		t.Errorf("get %+v", read)
	}
	if p, err := decrypt(t, read.ConfigEncrypted, read.EncryptionContext); err != nil || p != `{"apiToken":"other"}` {
		t.Errorf("decrypt what GET returns: %q %v", p, err)
	}

	before := s.Digest(t)
	big := `{"k":"` + strings.Repeat("x", agenticpm.MaxConfigBytes) + `"}`
	for _, tt := range []struct {
		name, path, body string
		field            string
	}{
		{"bad name", "/integrations/trello", `{"config":` + plain + `,"status":"active"}`, "name"},
		{"old ciphertext field", "/integrations/asana", `{"configEncrypted":"c2VjcmV0","config":` + plain + `,"status":"active"}`, "configEncrypted"},
		{"missing config", "/integrations/asana", `{"status":"active"}`, "config"},
		{"config not an object", "/integrations/asana", `{"config":"` + marker + `","status":"active"}`, "config"},
		{"config too large for KMS", "/integrations/asana", `{"config":` + big + `,"status":"active"}`, "config"},
		{"bad status", "/integrations/asana", `{"config":` + plain + `,"status":"ok"}`, "status"},
		{"unknown field", "/integrations/asana", `{"config":` + plain + `,"status":"active","id":"x"}`, "id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "PUT", tt.path, tt.body)
			apitest.WantError(t, r, 400, "validation_failed", tt.field, "")
			if strings.Contains(string(r.Body), marker) {
				t.Errorf("the answer echoes the plaintext: %s", r.Body)
			}
		})
	}
	if s.Digest(t) != before {
		t.Error("a refused PUT wrote")
	}
	if strings.Contains(logs.String(), marker) || strings.Contains(logs.String(), "apiToken") {
		t.Errorf("plaintext logged: %s", logs.String())
	}
	if !strings.Contains(logs.String(), "/integrations/jira") {
		t.Error("no access log captured; the check above proves nothing")
	}
}

// An item stored the old way (ciphertext a client made, no encryption
// context) is refused, not migrated: the service cannot decrypt it (its
// role may only encrypt) and no agent is granted it. PUT replaces it.
func TestLegacyIntegrationRefused(t *testing.T) {
	s := newService(t, nil)
	s.putRaw(t, map[string]any{"PK": "INTEGRATION#asana", "SK": "CONFIG", "id": "3f1d7e3a-0000-4000-8000-0000000000aa",
		"integration": "asana", "configEncrypted": "c2VjcmV0", "status": "active",
		"createdAt": "2026-01-01T00:00:00.000000Z", "updatedAt": "2026-01-01T00:00:00.000000Z"})
	r := s.Do(t, "GET", "/integrations/asana", "")
	apitest.WantError(t, r, 409, "conflict", "", "PUT its plaintext config again")
	if strings.Contains(string(r.Body), "c2VjcmV0") {
		t.Errorf("the refusal echoes the old ciphertext: %s", r.Body)
	}
	var c agenticpm.IntegrationConfig
	s.Must(t, 200, "PUT", "/integrations/asana", `{"config":{"token":"t"},"status":"active"}`, &c)
	if c.ID != "3f1d7e3a-0000-4000-8000-0000000000aa" || len(c.EncryptionContext) != 2 {
		t.Errorf("replaced %+v", c)
	}
	s.Must(t, 200, "GET", "/integrations/asana", "", nil)
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
	apitest.WantError(t, s.Do(t, "PUT", "/integrations/jira", `{"config":{"a":"b"},"status":"active"}`), 500, "internal", "", "")
	if !strings.Contains(logs.String(), contract.EnvCredentialsKey) {
		t.Errorf("the log does not name %s: %s", contract.EnvCredentialsKey, logs.String())
	}

	down := newServiceWith(t, nil, func(cfg *agenticpm.Config) {
		c, err := kmslocal.Config(context.Background(), "http://127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		c.Retryer = func() aws.Retryer { return retry.AddWithMaxAttempts(retry.NewStandard(), 1) }
		cfg.KMS = agenticpmapi.KMS(c)
	})
	r := down.Do(t, "PUT", "/integrations/jira", `{"config":{"a":"b"},"status":"active"}`)
	apitest.WantError(t, r, 503, "unavailable", "", "")
	if n := down.Count(t); n != 0 {
		t.Errorf("%d items written without a ciphertext", n)
	}

	// KMS throttling past the SDK's retries, and KMS failing on its side
	// (a 5xx without an error code the SDK knows): 503 too.
	for _, e := range []*awsloop.Error{awsloop.KMSService.Throttle(), {Status: 503}} {
		kmsSrv := awsloop.NewServer(awsloop.KMSService)
		kmsSrv.Inject("Encrypt", -1, e)
		if err := kmsSrv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kmsSrv.Close() })
		refusing := newServiceWith(t, nil, func(cfg *agenticpm.Config) {
			c := awsloop.ConfigAt("AKIDAGENTICPM", kmsSrv.URL())
			c.Retryer = awsloop.NoBackoff
			cfg.KMS = agenticpmapi.KMS(c)
		})
		apitest.WantError(t, refusing.Do(t, "PUT", "/integrations/jira", `{"config":{"a":"b"},"status":"active"}`), 503, "unavailable", "", "")
		if n := len(kmsSrv.CallsOf("Encrypt")); n != retry.DefaultMaxAttempts {
			t.Errorf("KMS answering %d %s: %d Encrypt attempts, want the SDK's %d", e.Status, e.Code, n, retry.DefaultMaxAttempts)
		}
	}

	ok := newService(t, nil)
	client, proxy := servicetest.FaultyClient(t, "agenticpm")
	cfg := ok.cfg
	cfg.Client = client
	lossy := ok.Service
	lossy.H = agenticpmapi.NewHandler(cfg)
	proxy.NextOn("UpdateItem", ddbfault.DropAnswer, 1)
	var c agenticpm.IntegrationConfig
	lossy.Must(t, 200, "PUT", "/integrations/outlook", `{"config":{"a":"b"},"status":"active"}`, &c)
	if p, err := decrypt(t, c.ConfigEncrypted, c.EncryptionContext); err != nil || p != `{"a":"b"}` {
		t.Errorf("after a lost answer: %q %v", p, err)
	}
	if proxy.Faults() != 1 {
		t.Errorf("%d faults, want 1", proxy.Faults())
	}
}

// The IAM condition lists the contract's integrations; the API accepts
// its own: one list, or an integration could be stored that no agent may
// decrypt.
func TestContractIntegrationsMatch(t *testing.T) {
	var own []string
	for _, i := range agenticpm.Integrations {
		own = append(own, string(i))
	}
	if fmt.Sprint(own) != fmt.Sprint(contract.Integrations) {
		t.Errorf("service integrations %v, contract (IAM condition) %v", own, contract.Integrations)
	}
	ec := agenticpm.CredentialsContext(agenticpm.IntegrationJira, "dev")
	if len(ec) != 2 || ec[contract.ContextIntegration] != "jira" || ec[contract.ContextStage] != "dev" {
		t.Errorf("context %v", ec)
	}
}
