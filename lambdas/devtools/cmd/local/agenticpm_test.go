package main_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	pm "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 17 as make dev runs it: an escalation expires on its own (the
// release job's run after its deadline), and PUT /integrations/jira with
// a plaintext config stores only ciphertext, made by Local KMS under the
// template's key alias.
func TestAgenticPMExpiryAndCredentials(t *testing.T) {
	t.Parallel()
	// LOCAL_SCHEDULE_EVERY: only the first run, 2 s after start.
	r := startEnv(t, filepath.Dir(testenv.Template(t, "dev", "agenticpm")), []string{"LOCAL_SCHEDULE_EVERY=1h"})
	var p struct {
		ID string `json:"id"`
	}
	call(t, pm.CreateProject.Method, at(r.base, pm.Name, pm.CreateProject), `{"name":"MCU","source":"jira","sourceProjectKey":"MCU","autonomyLevel":"monitoring"}`, 201, &p)
	deadline := time.Now().Add(agenticpm.MinEscalationExpiry + time.Minute).UTC().Format(time.RFC3339Nano)
	var e struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	call(t, pm.CreateEscalation.Method, at(r.base, pm.Name, pm.CreateEscalation, p.ID),
		fmt.Sprintf(`{"title":"Quick?","context":{},"options":[{"option":"Yes"}],"expiresAt":%q}`, deadline), 201, &e)
	// Its deadline passes.
	backdate(t, r, pm.ProjectPK(p.ID), pm.PrefixEscalation+e.ID, map[string]func(string) string{
		pm.AttrExpiresAt: func(past string) string { return past },
	})
	call(t, "POST", r.base+"/_local/schedules/agenticpm-release", "", 200, nil)
	call(t, pm.GetEscalation.Method, at(r.base, pm.Name, pm.GetEscalation, p.ID, e.ID), "", 200, &e)
	assert.Equal(t, "expired", e.Status, "escalation after the job's run past its deadline")

	const marker = "PLAINTEXT-TOKEN-c41d"
	var c struct {
		ConfigEncrypted   string            `json:"configEncrypted"`
		KMSKeyID          string            `json:"kmsKeyId"`
		EncryptionContext map[string]string `json:"encryptionContext"`
	}
	call(t, pm.PutIntegration.Method, at(r.base, pm.Name, pm.PutIntegration, "jira"), `{"config":{"apiToken":"`+marker+`"},"status":"active"}`, 200, &c)
	require.NotEmpty(t, c.ConfigEncrypted, "stored config: %+v", c)
	require.Contains(t, c.KMSKeyID, ":key/", "stored KMS key")
	require.Equal(t, "dev", c.EncryptionContext["stage"], "stored encryption context: stage")
	require.Equal(t, "jira", c.EncryptionContext["integration"], "stored encryption context: integration")
	m := regexp.MustCompile(`dynamodb (http://[0-9.:]+)`).FindStringSubmatch(r.ready)
	require.NotNil(t, m, "no DynamoDB endpoint in the ready line %q", r.ready)
	client, err := ddb.NewClient(context.Background(), ddblocal.WithEndpoint(m[1], nil))
	require.NoError(t, err)
	out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("AgenticPM-dev" + r.suffix), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "INTEGRATION#jira"}, "SK": &types.AttributeValueMemberS{Value: "CONFIG"}}})
	require.NoError(t, err, "raw item")
	require.NotEmpty(t, out.Item, "raw item")
	var raw map[string]any
	_ = attributevalue.UnmarshalMap(out.Item, &raw)
	s := fmt.Sprint(raw)
	assert.NotContains(t, s, marker, "the raw item holds plaintext")
	assert.NotContains(t, s, "apiToken", "the raw item holds plaintext")
}
