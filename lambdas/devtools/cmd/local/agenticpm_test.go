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

	"github.com/google/uuid"

	pm "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	pmclient "github.com/dynastack/dynastack/lambdas/client/agenticpm"
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
	// The agent's calls, through the generated client (lambdas/client/agenticpm).
	api, err := pmclient.NewClientWithResponses(r.base + "/" + pm.Name)
	require.NoError(t, err)
	p, err := api.CreateProjectWithResponse(t.Context(), nil, pmclient.CreateProjectJSONRequestBody{Name: new("MCU"), Source: new("jira"),
		SourceProjectKey: new("MCU"), AutonomyLevel: new("monitoring")})
	answered(t, 201, p, p.Body, err, "create project")
	pid, err := uuid.Parse(p.JSON201.Id)
	require.NoError(t, err, "project id is a UUID")
	deadline := time.Now().Add(agenticpm.MinEscalationExpiry + time.Minute).UTC().Format(time.RFC3339Nano)
	var options any = []map[string]any{{"option": "Yes"}}
	var escalationContext any = map[string]any{}
	e, err := api.CreateEscalationWithResponse(t.Context(), pid, nil, pmclient.EscalationRequest{Title: new("Quick?"), Context: escalationContext,
		Options: options, ExpiresAt: &deadline})
	answered(t, 201, e, e.Body, err, "create escalation")

	// Its deadline passes.
	backdate(t, r, pm.ProjectPK(p.JSON201.Id), pm.PrefixEscalation+e.JSON201.Id, map[string]func(string) string{
		pm.AttrExpiresAt: func(past string) string { return past },
	})
	call(t, "POST", r.base+"/_local/schedules/agenticpm-release", "", 200, nil)
	got, err := api.GetEscalationWithResponse(t.Context(), pid, e.JSON201.Id)
	answered(t, 200, got, got.Body, err, "get escalation")
	assert.Equal(t, "expired", got.JSON200.Status, "escalation after the job's run past its deadline")

	const marker = "PLAINTEXT-TOKEN-c41d"
	var config any = map[string]any{"apiToken": marker}
	put, err := api.PutIntegrationWithResponse(t.Context(), "jira", pmclient.PutIntegrationJSONRequestBody{Config: config, Status: new("active")})
	answered(t, 200, put, put.Body, err, "put integration")
	c := put.JSON200
	require.NotEmpty(t, c.ConfigEncrypted, "stored config: %+v", c)
	require.Contains(t, c.KmsKeyId, ":key/", "stored KMS key")
	require.NotNil(t, c.EncryptionContext, "stored encryption context")
	require.Equal(t, "dev", (*c.EncryptionContext)["stage"], "stored encryption context: stage")
	require.Equal(t, "jira", (*c.EncryptionContext)["integration"], "stored encryption context: integration")

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
