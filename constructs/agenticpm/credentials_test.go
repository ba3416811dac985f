package agenticpm_test

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/jsii-runtime-go"

	"github.com/dynastack/dynastack/constructs/agenticpm"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// credentialsTemplate reads a synthesized stack's credentials key (its
// properties), its alias and the policy documents of its roles by the
// role's logical id prefix (Agent, Other).
func credentialsTemplate(t *testing.T, tmpl map[string]any) (keyProps map[string]any, alias string, roles map[string]map[string]any) {
	t.Helper()
	roles = map[string]map[string]any{}
	for _, r := range tmpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		switch r["Type"] {
		case "AWS::KMS::Key":
			require.Nil(t, keyProps, "two keys")
			keyProps = props
		case "AWS::KMS::Alias":
			alias, _ = props["AliasName"].(string)
		case "AWS::IAM::Policy":
			ref := props["Roles"].([]any)[0].(map[string]any)["Ref"].(string)
			roles[ref[:len(ref)-8]] = props["PolicyDocument"].(map[string]any)
		}
	}
	require.NotNil(t, keyProps, "no key")
	return keyProps, alias, roles
}

func statements(t *testing.T, doc any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, s := range doc.(map[string]any)["Statement"].([]any) {
		out = append(out, s.(map[string]any))
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const (
	root = `{"AWS":{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":iam::",{"Ref":"AWS::AccountId"},":root"]]}}`
	// The condition of every integration (the account's delegation to
	// IAM, the API's Encrypt) and of the Jira grant.
	allIntegrations = `{"ForAllValues:StringEquals":{"kms:EncryptionContextKeys":["integration","stage"]},"StringEquals":{"kms:EncryptionContext:integration":["jira","asana","outlook","resend"],"kms:EncryptionContext:stage":"prod"}}`
	jiraOnly        = `{"ForAllValues:StringEquals":{"kms:EncryptionContextKeys":["integration","stage"]},"StringEquals":{"kms:EncryptionContext:integration":["jira"],"kms:EncryptionContext:stage":"prod"}}`
	jiraAsana       = `{"ForAllValues:StringEquals":{"kms:EncryptionContextKeys":["integration","stage"]},"StringEquals":{"kms:EncryptionContext:integration":["jira","asana"],"kms:EncryptionContext:stage":"prod"}}`
)

// The credentials key of a stage: rotation on, the stage's alias; a key
// policy in which the account administers the key and decrypts through
// IAM only under the credentials condition (no kms:* for the account, no
// Encrypt through IAM), grants only for AWS resources; and an agent role
// granted one integration by the helper: kms:Decrypt under a condition
// naming that integration only, in its policy and in the key policy.
func TestCredentialsKeyAndDecryptGrant(t *testing.T) {
	stack := cdktest.NewStack(t)
	key, err := agenticpm.NewCredentialsKey(stack, "Key", table.Prod)
	require.NoError(t, err)
	lambda := awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)
	agent := awsiam.NewRole(stack, jsii.String("Agent"), &awsiam.RoleProps{AssumedBy: lambda})
	grant, err := agenticpm.GrantCredentialsDecrypt(key, agent, table.Prod, "jira")
	require.NoError(t, err)
	assert.True(t, *grant.Success(), "the grant reports no statement added")
	other := awsiam.NewRole(stack, jsii.String("Other"), &awsiam.RoleProps{AssumedBy: lambda})
	_, err = agenticpm.GrantCredentialsDecrypt(key, other, table.Prod, "jira", "asana")
	require.NoError(t, err)
	_, err = agenticpm.NewCredentialsKey(stack, "NoStage", "")
	assert.Error(t, err, "a key without a stage was built")

	keyProps, alias, roles := credentialsTemplate(t, cdktest.JSON(t, stack))
	assert.Equal(t, true, keyProps["EnableKeyRotation"], "key %v", keyProps)
	assert.Equal(t, "alias/agenticpm-credentials-prod", alias, "alias")

	// Each role's policy: kms:Decrypt on the key, its integrations only.
	for role, want := range map[string]string{"Agent": jiraOnly, "Other": jiraAsana} {
		require.Contains(t, roles, role, "role policies")
		stmts := statements(t, roles[role])
		require.Len(t, stmts, 1, "%s's policy %v", role, roles[role])
		assert.Equal(t, "kms:Decrypt", stmts[0]["Action"], "%s's statement", role)
		assert.Equal(t, `{"Fn::GetAtt":["Key961B73FD","Arn"]}`, jsonOf(stmts[0]["Resource"]), "%s's statement: resource", role)
		assert.Equal(t, want, jsonOf(stmts[0]["Condition"]), "%s's statement: condition", role)
	}

	// The key policy, statement by statement.
	stmts := statements(t, keyProps["KeyPolicy"])
	require.Len(t, stmts, 5, "key policy %v", keyProps["KeyPolicy"])
	admin, decrypt, noGrants, agentStmt, otherStmt := stmts[0], stmts[1], stmts[2], stmts[3], stmts[4]
	assert.Equal(t, "KeyAdministration", admin["Sid"], "first statement")
	assert.Equal(t, root, jsonOf(admin["Principal"]), "administration: the account")
	assert.ElementsMatch(t, []any{"kms:Create*", "kms:Describe*", "kms:Enable*", "kms:List*", "kms:Put*", "kms:Update*", "kms:Revoke*",
		"kms:Disable*", "kms:Get*", "kms:Delete*", "kms:TagResource", "kms:UntagResource", "kms:ScheduleKeyDeletion",
		"kms:CancelKeyDeletion", "kms:RotateKeyOnDemand"}, admin["Action"], "administration: actions")
	assert.NotContains(t, admin, "Condition", "administration")

	assert.Equal(t, "CredentialsDecryptThroughIAM", decrypt["Sid"], "second statement")
	assert.Equal(t, root, jsonOf(decrypt["Principal"]), "decrypt through IAM: the account")
	assert.Equal(t, "kms:Decrypt", decrypt["Action"], "decrypt through IAM: action")
	assert.Equal(t, allIntegrations, jsonOf(decrypt["Condition"]), "decrypt through IAM: condition")

	assert.Equal(t, "Deny", noGrants["Effect"], "grants for AWS resources only")
	assert.Equal(t, "kms:CreateGrant", noGrants["Action"], "grants for AWS resources only")

	for _, tt := range []struct {
		name string
		stmt map[string]any
		cond string
	}{{"Agent", agentStmt, jiraOnly}, {"Other", otherStmt, jiraAsana}} {
		assert.Equal(t, "kms:Decrypt", tt.stmt["Action"], "key policy: %s's statement", tt.name)
		assert.Contains(t, jsonOf(tt.stmt["Principal"]), `{"Fn::GetAtt":["`+tt.name, "key policy: %s's statement names it", tt.name)
		assert.Equal(t, tt.cond, jsonOf(tt.stmt["Condition"]), "key policy: %s's statement: condition", tt.name)
	}
	// Nothing of the account's is unconditioned crypto: no kms:*, no
	// Encrypt, ReEncrypt or GenerateDataKey for anyone here.
	kp := jsonOf(keyProps["KeyPolicy"])
	for _, action := range []string{`"kms:*"`, `"kms:Encrypt"`, `"kms:ReEncrypt`, `"kms:GenerateDataKey`} {
		assert.NotContains(t, kp, action, "key policy")
	}
}

// An imported key (another stack, by the CredentialsKeyArn output): the
// grant is the role's policy alone, with the same condition.
func TestDecryptGrantOnAnImportedKey(t *testing.T) {
	stack := cdktest.NewStack(t)
	key := awskms.Key_FromKeyArn(stack, jsii.String("Credentials"), jsii.String("arn:aws:kms:eu-central-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"))
	agent := awsiam.NewRole(stack, jsii.String("Agent"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	_, err := agenticpm.GrantCredentialsDecrypt(key, agent, table.Prod, "jira")
	require.NoError(t, err)

	tmpl := cdktest.JSON(t, stack)
	var docs []any
	for _, r := range tmpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		assert.NotEqual(t, "AWS::KMS::Key", r["Type"], "an imported key got a resource")
		if r["Type"] == "AWS::IAM::Policy" {
			docs = append(docs, r["Properties"].(map[string]any)["PolicyDocument"])
		}
	}
	require.Len(t, docs, 1, "role policies")
	stmts := statements(t, docs[0])
	require.Len(t, stmts, 1, "role policy %v", docs[0])
	assert.Equal(t, "kms:Decrypt", stmts[0]["Action"], "role statement")
	assert.Equal(t, "arn:aws:kms:eu-central-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab", stmts[0]["Resource"], "role statement: resource")
	assert.Equal(t, jiraOnly, jsonOf(stmts[0]["Condition"]), "role statement: condition")
}

// What GrantCredentialsDecrypt refuses: each error names the value and
// the fix, and nothing is granted.
func TestDecryptGrantRefuses(t *testing.T) {
	for _, tt := range []struct {
		name         string
		stage        table.Stage
		integrations []string
		want         []string
	}{
		{"no integration", table.Prod, nil, []string{"no integration named", "jira, asana, outlook, resend"}},
		{"an unknown integration", table.Prod, []string{"jira", "trello"}, []string{`"trello"`, "jira, asana, outlook, resend", "contract.Integrations"}},
		{"another case", table.Prod, []string{"Jira"}, []string{`"Jira"`, "jira, asana, outlook, resend"}},
		{"a pattern", table.Prod, []string{"*"}, []string{`"*"`, "jira, asana, outlook, resend"}},
		{"named twice", table.Prod, []string{"jira", "asana", "jira"}, []string{`"jira" is named twice`}},
		{"no stage", "", []string{"jira"}, []string{`stage ""`, "[dev stage prod]"}},
		{"an unknown stage", "qa", []string{"jira"}, []string{`stage "qa"`, "[dev stage prod]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stack := cdktest.NewStack(t)
			key, err := agenticpm.NewCredentialsKey(stack, "Key", table.Prod)
			require.NoError(t, err)
			agent := awsiam.NewRole(stack, jsii.String("Agent"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
			grant, err := agenticpm.GrantCredentialsDecrypt(key, agent, tt.stage, tt.integrations...)
			require.Error(t, err)
			assert.Nil(t, grant, "a grant with the error")
			assert.Contains(t, err.Error(), "agenticpm: GrantCredentialsDecrypt", "error")
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w, "error")
			}
			keyProps, _, roles := credentialsTemplate(t, cdktest.JSON(t, stack))
			assert.Empty(t, roles, "role policies after a refused grant")
			assert.Len(t, statements(t, keyProps["KeyPolicy"]), 3, "key policy statements after a refused grant")
		})
	}
	stack := cdktest.NewStack(t)
	key, err := agenticpm.NewCredentialsKey(stack, "Key", table.Prod)
	require.NoError(t, err)
	_, err = agenticpm.GrantCredentialsDecrypt(key, nil, table.Prod, "jira")
	assert.ErrorContains(t, err, "grantee is nil", "no grantee")
	_, err = agenticpm.GrantCredentialsDecrypt(nil, awsiam.NewAccountRootPrincipal(), table.Prod, "jira")
	assert.ErrorContains(t, err, "key is nil", "no key")
}
