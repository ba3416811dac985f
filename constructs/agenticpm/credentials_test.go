package agenticpm_test

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/dynastack/dynastack/constructs/agenticpm"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The credentials key of a stage: rotation on, the stage's alias, and an
// agent role granted kms:Decrypt by the helper only under the encryption
// context condition, in its policy and named in the key policy; no
// kms:Encrypt, no other action.
func TestCredentialsKeyAndDecryptGrant(t *testing.T) {
	stack := cdktest.NewStack(t)
	key, err := agenticpm.NewCredentialsKey(stack, "Key", table.Prod)
	require.NoError(t, err)
	role := awsiam.NewRole(stack, jsii.String("Agent"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	agenticpm.GrantCredentialsDecrypt(key, role, table.Prod)
	_, err = agenticpm.NewCredentialsKey(stack, "NoStage", "")
	assert.Error(t, err, "a key without a stage was built")

	tmpl := cdktest.JSON(t, stack)
	resources := tmpl["Resources"].(map[string]any)
	var keyProps, policyDoc map[string]any
	alias := ""
	for _, r := range resources {
		r := r.(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		switch r["Type"] {
		case "AWS::KMS::Key":
			require.Nil(t, keyProps, "two keys")
			keyProps = props
		case "AWS::KMS::Alias":
			alias, _ = props["AliasName"].(string)
		case "AWS::IAM::Policy":
			policyDoc = props["PolicyDocument"].(map[string]any)
		}
	}
	assert.Equal(t, true, keyProps["EnableKeyRotation"], "key %v", keyProps)
	assert.Equal(t, "alias/agenticpm-credentials-prod", alias, "alias")
	wantCond := `{"ForAllValues:StringEquals":{"kms:EncryptionContextKeys":["integration","stage"]},"StringEquals":{"kms:EncryptionContext:integration":["jira","asana","outlook","resend"],"kms:EncryptionContext:stage":"prod"}}`
	stmts := policyDoc["Statement"].([]any)
	require.Len(t, stmts, 1, "role policy %v", policyDoc)
	s := stmts[0].(map[string]any)
	cond, _ := json.Marshal(s["Condition"])
	assert.Equal(t, "kms:Decrypt", s["Action"], "role statement %v", s)
	assert.Equal(t, wantCond, string(cond), "role statement condition")
	kp, _ := json.Marshal(keyProps["KeyPolicy"])
	assert.Contains(t, string(kp), `"Action":"kms:Decrypt","Condition":`+wantCond, "key policy")
	assert.Contains(t, string(kp), `"Fn::GetAtt":["Agent`, "key policy")
	assert.Contains(t, string(kp), `"Action":"kms:CreateGrant"`, "key policy")
	assert.NotContains(t, string(kp), `"kms:Encrypt"`, "key policy")
}
