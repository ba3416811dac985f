package test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm"
	agenticpmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/test/cdkapp"
	"github.com/dynastack/dynastack/test/iameval"
)

// decryptGrants are the roles an agent team's stack grants with
// agenticpm.GrantCredentialsDecrypt, by construct id: one integration,
// and two.
var decryptGrants = map[string][]string{"Jira": {"jira"}, "JiraAsana": {"jira", "asana"}}

// credentialsGrants holds what agenticpm.GrantCredentialsDecrypt wrote,
// synthesized by TestMain beside the app (jsii runs once per test
// binary), intrinsics resolved.
type credentialsGrants struct {
	// imported[stage][role] is the policy of a role of decryptGrants in an
	// agent stack that imports the stage's credentials key by its ARN
	// (the CredentialsKeyArn output), as another team does.
	imported map[string]map[string]any
	// A stack with a credentials key of its own (NewCredentialsKey,
	// prod) and a role of decryptGrants granted on it, so that the key
	// policy names the role: the key's ARN and policy, each role's ARN
	// and policy.
	ownedKey       string
	ownedKeyPolicy any
	ownedRoles     map[string]string
	owned          map[string]any
}

var credGrants *credentialsGrants

// credentialsKey finds a stage's credentials key in its AgenticPM
// template: its ARN and its key policy, resolved.
func credentialsKey(tmpl cdkapp.Template, stage string) (arn string, policy any, err error) {
	resources, _ := tmpl["Resources"].(map[string]any)
	for _, a := range tmpl.Resources("AWS::KMS::Alias") {
		if props(a)["AliasName"] != agenticpmcontract.CredentialsKeyAlias(stage) {
			continue
		}
		target, err := iameval.Resolve(props(a)["TargetKeyId"], resources, deployEnv)
		if err != nil {
			return "", nil, err
		}
		ref, _ := props(a)["TargetKeyId"].(map[string]any)["Fn::GetAtt"].([]any)
		if len(ref) != 2 {
			return "", nil, fmt.Errorf("%s: alias %s targets %v", stage, agenticpmcontract.CredentialsKeyAlias(stage), props(a)["TargetKeyId"])
		}
		key, _ := resources[ref[0].(string)].(map[string]any)
		policy, err := iameval.Resolve(props(key)["KeyPolicy"], resources, deployEnv)
		if err != nil {
			return "", nil, err
		}
		arn, _ = target.(string)
		return arn, policy, nil
	}
	return "", nil, fmt.Errorf("%s: no alias %s", stage, agenticpmcontract.CredentialsKeyAlias(stage))
}

// synthCredentialsGrants builds the agent stacks: every stage's key of
// the app imported by its ARN, and a key of the stack's own.
func synthCredentialsGrants(asm *cdkapp.Assembly) (*credentialsGrants, error) {
	dir, err := os.MkdirTemp("", "dynastack-agents-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	root, err := config.RepoRoot()
	if err != nil {
		return nil, err
	}
	ctx, err := cdktest.Context(filepath.Join(root, "cdk.json"), false)
	if err != nil {
		return nil, err
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(dir), Context: &ctx})
	lambda := awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)
	agents := awscdk.NewStack(app, jsii.String("Agents"), nil)
	stages := slices.Sorted(maps.Keys(asm.Templates))
	for _, stage := range stages {
		arn, _, err := credentialsKey(asm.Templates[stage][agenticpmcontract.Name], stage)
		if err != nil {
			return nil, err
		}
		key := awskms.Key_FromKeyArn(agents, jsii.String("Credentials"+stage), jsii.String(arn))
		for role, integrations := range decryptGrants {
			r := awsiam.NewRole(agents, jsii.String(stage+role), &awsiam.RoleProps{AssumedBy: lambda})
			if _, err := agenticpm.GrantCredentialsDecrypt(key, r, table.Stage(stage), integrations...); err != nil {
				return nil, err
			}
		}
	}
	owned := awscdk.NewStack(app, jsii.String("Owned"), nil)
	key, err := agenticpm.NewCredentialsKey(owned, "Key", table.Prod)
	if err != nil {
		return nil, err
	}
	for role, integrations := range decryptGrants {
		r := awsiam.NewRole(owned, jsii.String(role), &awsiam.RoleProps{AssumedBy: lambda})
		if _, err := agenticpm.GrantCredentialsDecrypt(key, r, table.Prod, integrations...); err != nil {
			return nil, err
		}
	}
	cloud := app.Synth(nil)
	out := &credentialsGrants{imported: map[string]map[string]any{}, ownedRoles: map[string]string{}, owned: map[string]any{}}
	for _, id := range []string{"Agents", "Owned"} {
		raw, err := json.Marshal(cloud.GetStackArtifact(jsii.String(id)).Template())
		if err != nil {
			return nil, err
		}
		var tmpl cdkapp.Template
		if err := json.Unmarshal(raw, &tmpl); err != nil {
			return nil, err
		}
		resources, _ := tmpl["Resources"].(map[string]any)
		for _, p := range tmpl.Resources("AWS::IAM::Policy") {
			ref, _ := props(p)["Roles"].([]any)[0].(map[string]any)["Ref"].(string)
			doc, err := iameval.Resolve(props(p)["PolicyDocument"], resources, deployEnv)
			if err != nil {
				return nil, err
			}
			name := ref[:len(ref)-8] // the construct id; CDK adds a hash
			if id == "Owned" {
				arn, err := iameval.Resolve(map[string]any{"Fn::GetAtt": []any{ref, "Arn"}}, resources, deployEnv)
				if err != nil {
					return nil, err
				}
				out.owned[name], out.ownedRoles[name] = doc, arn.(string)
				continue
			}
			for _, stage := range stages {
				if role, ok := strings.CutPrefix(name, stage); ok && decryptGrants[role] != nil {
					if out.imported[stage] == nil {
						out.imported[stage] = map[string]any{}
					}
					out.imported[stage][role] = doc
				}
			}
		}
		if id == "Owned" {
			out.ownedKey, out.ownedKeyPolicy, err = credentialsKey(tmpl, string(table.Prod))
			if err != nil {
				return nil, err
			}
		}
	}
	for _, stage := range stages {
		if len(out.imported[stage]) != len(decryptGrants) {
			return nil, fmt.Errorf("Agents: %d role policies for %s, want %d", len(out.imported[stage]), stage, len(decryptGrants))
		}
	}
	if len(out.owned) != len(decryptGrants) {
		return nil, fmt.Errorf("Owned: %d role policies, want %d", len(out.owned), len(decryptGrants))
	}
	return out, nil
}

// decryptCase is one kms:Decrypt by a principal with an encryption
// context, and whether KMS allows it.
type decryptCase struct {
	name string
	ec   map[string]string
	want bool
}

// kmsRequest is a call by principal with the condition keys KMS sets.
func kmsRequest(principal, action, key string, ec map[string]string) iameval.Request {
	return iameval.WithEncryptionContext(iameval.Request{Principal: principal, Action: action, Resource: key,
		Context: map[string]string{"kms:CallerAccount": deployEnv.Account, "aws:PrincipalArn": principal, "aws:PrincipalAccount": deployEnv.Account}}, ec)
}

// ctx is a credentials encryption context as the API writes it.
func ctx(integration, stage string, extra ...string) map[string]string {
	m := map[string]string{agenticpmcontract.ContextIntegration: integration, agenticpmcontract.ContextStage: stage}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

// TestCredentialsDecryptPerIntegration evaluates, with KMS's logic (the
// key policy must allow, naming the caller or delegating to IAM, and an
// IAM delegation needs the caller's own policy too; test/iameval), every
// stage's credentials key policy from the app with the policies
// agenticpm.GrantCredentialsDecrypt gives an agent team's roles on the
// imported key: a role granted Jira decrypts Jira's credentials of its
// stage and nothing else; a principal whose own policy allows
// kms:Decrypt on * is refused by the key policy without a credentials
// context of the stage; the account keeps administering the key.
func TestCredentialsDecryptPerIntegration(t *testing.T) {
	require.NotNil(t, credGrants, "agent stacks not synthesized")
	broad := []any{map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "kms:Decrypt", "Resource": "*"}}}}
	admin := []any{map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}}}}
	role := func(name string) string { return "arn:aws:iam::" + deployEnv.Account + ":role/" + name }
	stages := slices.Sorted(maps.Keys(asm.Templates))
	require.GreaterOrEqual(t, len(stages), 2, "stages")
	for i, stage := range stages {
		other := stages[(i+1)%len(stages)]
		key, keyPolicy, err := credentialsKey(asm.Templates[stage][agenticpmcontract.Name], stage)
		require.NoError(t, err)

		for _, tt := range []struct {
			role  string
			cases []decryptCase
		}{
			{"Jira", []decryptCase{
				{"Jira's credentials", ctx("jira", stage), true},
				{"Outlook's credentials", ctx("outlook", stage), false},
				{"Asana's credentials", ctx("asana", stage), false},
				{"Jira's of another stage", ctx("jira", other), false},
				{"no context", nil, false},
				{"the integration alone", map[string]string{agenticpmcontract.ContextIntegration: "jira"}, false},
				{"an extra key", ctx("jira", stage, "tenant", "acme"), false},
			}},
			{"JiraAsana", []decryptCase{
				{"Jira's credentials", ctx("jira", stage), true},
				{"Asana's credentials", ctx("asana", stage), true},
				{"Outlook's credentials", ctx("outlook", stage), false},
				{"Resend's credentials", ctx("resend", stage), false},
				{"no context", nil, false},
			}},
		} {
			doc := credGrants.imported[stage][tt.role]
			for _, c := range tt.cases {
				d, err := iameval.EvaluateKMS(keyPolicy, []any{doc}, kmsRequest(role(stage+tt.role), "kms:Decrypt", key, c.ec))
				require.NoError(t, err, "%s: %s", stage, tt.role)
				assert.Equal(t, c.want, d.Outcome == iameval.Allow, "%s: role granted %v decrypts %s (%+v)", stage, decryptGrants[tt.role], c.name, d)
			}
		}

		// A principal the grant does not name, whose own policy allows
		// kms:Decrypt on everything: its policy allows each call, the key
		// policy refuses every one without a credentials context of this
		// stage.
		for _, c := range []decryptCase{
			{"no context", nil, false},
			{"the integration alone", map[string]string{agenticpmcontract.ContextIntegration: "jira"}, false},
			{"the stage alone", map[string]string{agenticpmcontract.ContextStage: stage}, false},
			{"another stage's context", ctx("jira", other), false},
			{"an integration the contract does not name", ctx("trello", stage), false},
			{"an extra key", ctx("jira", stage, "tenant", "acme"), false},
			{"a key in another case", map[string]string{agenticpmcontract.ContextIntegration: "jira", "Stage": stage}, false},
			{"a context of something else", map[string]string{"aws:s3:arn": "arn:aws:s3:::bucket/x"}, false},
			// The key delegates kms:Decrypt to IAM under the credentials
			// condition, so the principal's own policy decides which
			// integration: GrantCredentialsDecrypt's condition, or none.
			{"Jira's credentials, with their context", ctx("jira", stage), true},
		} {
			d, err := iameval.EvaluateKMS(keyPolicy, broad, kmsRequest(role("Broad"), "kms:Decrypt", key, c.ec))
			require.NoError(t, err, "%s: broad", stage)
			assert.Equal(t, iameval.Allow, d.Identity, "%s: the broad policy allows %s", stage, c.name)
			assert.Equal(t, c.want, d.Outcome == iameval.Allow, "%s: a kms:Decrypt on * decrypts with %s (%+v)", stage, c.name, d)
			if !c.want {
				assert.NotEqual(t, iameval.Allow, d.Account, "%s: the key policy delegates kms:Decrypt with %s to IAM", stage, c.name)
			}
		}

		// The account administers the key through IAM (a principal
		// allowed kms:* on *, as an administrator or CloudFormation's
		// role is): nobody is locked out. It encrypts nothing and
		// decrypts nothing outside the credentials condition.
		for _, c := range []struct {
			action string
			ec     map[string]string
			want   iameval.Decision
		}{
			{"kms:PutKeyPolicy", nil, iameval.Allow},
			{"kms:GetKeyPolicy", nil, iameval.Allow},
			{"kms:DescribeKey", nil, iameval.Allow},
			{"kms:ScheduleKeyDeletion", nil, iameval.Allow},
			{"kms:CancelKeyDeletion", nil, iameval.Allow},
			{"kms:EnableKeyRotation", nil, iameval.Allow},
			{"kms:RotateKeyOnDemand", nil, iameval.Allow},
			{"kms:DisableKey", nil, iameval.Allow},
			{"kms:UpdateKeyDescription", nil, iameval.Allow},
			{"kms:CreateAlias", nil, iameval.Allow},
			{"kms:TagResource", nil, iameval.Allow},
			{"kms:ListGrants", nil, iameval.Allow},
			{"kms:RevokeGrant", nil, iameval.Allow},
			{"kms:CreateGrant", nil, iameval.ExplicitDeny},
			{"kms:Decrypt", nil, iameval.ImplicitDeny},
			{"kms:Encrypt", ctx("jira", stage), iameval.ImplicitDeny},
			{"kms:GenerateDataKey", ctx("jira", stage), iameval.ImplicitDeny},
			{"kms:ReEncryptFrom", ctx("jira", stage), iameval.ImplicitDeny},
		} {
			d, err := iameval.EvaluateKMS(keyPolicy, admin, kmsRequest(role("Admin"), c.action, key, c.ec))
			require.NoError(t, err, "%s: admin", stage)
			assert.Equal(t, c.want, d.Outcome, "%s: %s by an administrator (%+v)", stage, c.action, d)
		}
	}
}

// With a key of the agent stack's own (NewCredentialsKey), the key
// policy names the granted role under its integrations' condition: the
// role decrypts them on that statement alone, and no other.
func TestCredentialsDecryptOnAnOwnedKey(t *testing.T) {
	require.NotNil(t, credGrants, "agent stacks not synthesized")
	stage := string(table.Prod)
	for _, tt := range []struct {
		role string
		ec   map[string]string
		want bool
	}{
		{"Jira", ctx("jira", stage), true},
		{"Jira", ctx("outlook", stage), false},
		{"Jira", ctx("jira", "dev"), false},
		{"Jira", nil, false},
		{"JiraAsana", ctx("asana", stage), true},
		{"JiraAsana", ctx("resend", stage), false},
	} {
		req := kmsRequest(credGrants.ownedRoles[tt.role], "kms:Decrypt", credGrants.ownedKey, tt.ec)
		d, err := iameval.EvaluateKMS(credGrants.ownedKeyPolicy, []any{credGrants.owned[tt.role]}, req)
		require.NoError(t, err, tt.role)
		assert.Equal(t, tt.want, d.Outcome == iameval.Allow, "%s decrypts with %v (%+v)", tt.role, tt.ec, d)
		// The key policy's statement naming the role allows exactly what
		// its own policy does.
		withoutIAM, err := iameval.EvaluateKMS(credGrants.ownedKeyPolicy, nil, req)
		require.NoError(t, err, tt.role)
		assert.Equal(t, tt.want, withoutIAM.Key == iameval.Allow, "%s decrypts with %v by the key policy alone (%+v)", tt.role, tt.ec, withoutIAM)
	}
}
