package agenticpm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/dynastack/dynastack/constructs/agenticpm"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/constructs/table"
)

// The credentials key of a stage: rotation on, the stage's alias, and an
// agent role granted kms:Decrypt by the helper only under the encryption
// context condition, in its policy and named in the key policy; no
// kms:Encrypt, no other action.
func TestCredentialsKeyAndDecryptGrant(t *testing.T) {
	stack := cdktest.NewStack(t)
	key, err := agenticpm.NewCredentialsKey(stack, "Key", table.Prod)
	if err != nil {
		t.Fatal(err)
	}
	role := awsiam.NewRole(stack, jsii.String("Agent"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	agenticpm.GrantCredentialsDecrypt(key, role, table.Prod)
	if _, err := agenticpm.NewCredentialsKey(stack, "NoStage", ""); err == nil {
		t.Error("a key without a stage was built")
	}

	tmpl := cdktest.JSON(t, stack)
	resources := tmpl["Resources"].(map[string]any)
	var keyProps, policyDoc map[string]any
	alias := ""
	for _, r := range resources {
		r := r.(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		switch r["Type"] {
		case "AWS::KMS::Key":
			if keyProps != nil {
				t.Fatal("two keys")
			}
			keyProps = props
		case "AWS::KMS::Alias":
			alias, _ = props["AliasName"].(string)
		case "AWS::IAM::Policy":
			policyDoc = props["PolicyDocument"].(map[string]any)
		}
	}
	if keyProps["EnableKeyRotation"] != true || alias != "alias/agenticpm-credentials-prod" {
		t.Errorf("key %v, alias %q", keyProps, alias)
	}
	wantCond := `{"ForAllValues:StringEquals":{"kms:EncryptionContextKeys":["integration","stage"]},"StringEquals":{"kms:EncryptionContext:integration":["jira","asana","outlook","resend"],"kms:EncryptionContext:stage":"prod"}}`
	stmts := policyDoc["Statement"].([]any)
	if len(stmts) != 1 {
		t.Fatalf("role policy %v", policyDoc)
	}
	s := stmts[0].(map[string]any)
	cond, _ := json.Marshal(s["Condition"])
	if s["Action"] != "kms:Decrypt" || string(cond) != wantCond {
		t.Errorf("role statement %v (condition %s)", s, cond)
	}
	kp, _ := json.Marshal(keyProps["KeyPolicy"])
	if !strings.Contains(string(kp), `"Action":"kms:Decrypt","Condition":`+wantCond) || !strings.Contains(string(kp), `"Fn::GetAtt":["Agent`) ||
		!strings.Contains(string(kp), `"Action":"kms:CreateGrant"`) || strings.Contains(string(kp), `"kms:Encrypt"`) {
		t.Errorf("key policy %s", kp)
	}
}
