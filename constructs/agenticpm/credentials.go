package agenticpm

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/table"
)

// NewCredentialsKey creates a stage's customer-managed KMS key for
// integration credentials (docs/schemas/agenticpm.md, decision 10):
// symmetric, yearly rotation on, alias contract.CredentialsKeyAlias(stage).
// The key policy keeps CDK's default (the account administers the key
// through IAM) and each GrantCredentials… call adds a statement naming its
// role. Outside dev the key outlives its stack (RETAIN): credentials
// encrypted under it stay readable after a stack is replaced.
func NewCredentialsKey(scope constructs.Construct, id string, stage table.Stage) (awskms.Key, error) {
	if stage == "" {
		return nil, fmt.Errorf("agenticpm: NewCredentialsKey %s: stage is required (the alias and encryption context name it)", id)
	}
	removal, window := awscdk.RemovalPolicy_RETAIN, awscdk.Duration_Days(jsii.Number(30))
	if stage == table.Dev {
		removal, window = awscdk.RemovalPolicy_DESTROY, awscdk.Duration_Days(jsii.Number(7))
	}
	key := awskms.NewKey(scope, jsii.String(id), &awskms.KeyProps{
		Alias:             jsii.String(contract.CredentialsKeyAlias(string(stage))),
		Description:       jsii.String("AgenticPM " + string(stage) + ": integration credentials (configEncrypted); encryption context integration + stage"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     removal,
		PendingWindow:     window,
	})
	// No grants but those AWS services make for their own resources
	// (Control Tower CT.KMS.PR.3): a grant would let its grantee use the
	// key outside the IAM conditions below.
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Effect:     awsiam.Effect_DENY,
		Actions:    jsii.Strings("kms:CreateGrant"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Resources:  jsii.Strings("*"),
		Conditions: &map[string]any{"BoolIfExists": map[string]any{
			"kms:GrantIsForAWSResource": "false",
			"aws:PrincipalIsAWSService": "false",
		}},
	}), jsii.Bool(false))
	return key, nil
}

// CredentialsCondition is the IAM condition every use of the credentials
// key is granted under: an encryption context of exactly the keys
// integration (one of the document's integrations) and stage (this
// stage), as the API encrypts with. A principal granted under it cannot
// use the key for anything else, nor for another stage's credentials.
func CredentialsCondition(stage table.Stage) map[string]any {
	integrations := make([]any, len(contract.Integrations))
	for i, n := range contract.Integrations {
		integrations[i] = n
	}
	return map[string]any{
		"StringEquals": map[string]any{
			"kms:EncryptionContext:" + contract.ContextStage:       string(stage),
			"kms:EncryptionContext:" + contract.ContextIntegration: integrations,
		},
		"ForAllValues:StringEquals": map[string]any{
			"kms:EncryptionContextKeys": []any{contract.ContextIntegration, contract.ContextStage},
		},
	}
}

// GrantCredentialsEncrypt lets grantee (the API's role) call kms:Encrypt
// with key, only under CredentialsCondition: in its identity policy and,
// naming it, in the key policy when the key is this app's.
func GrantCredentialsEncrypt(key awskms.IKey, grantee awsiam.IGrantable, stage table.Stage) {
	grantCredentials(key, grantee, stage, "kms:Encrypt")
}

// GrantCredentialsDecrypt lets grantee (an agent's role) call kms:Decrypt
// with key, only under CredentialsCondition: it can read the credentials
// GET /integrations/{name} returns (configEncrypted, with the
// encryptionContext to pass) and nothing else encrypted under the key.
// key is the stage's credentials key; in another stack take it from the
// AgenticPM stack's CredentialsKeyArn output:
//
//	key := awskms.Key_FromKeyArn(stack, jsii.String("Credentials"), jsii.String(keyArn))
//	agenticpm.GrantCredentialsDecrypt(key, agentRole, table.Prod)
//
// (an imported key's policy cannot be changed here; the account's default
// key policy delegates to IAM, so the identity policy is enough).
func GrantCredentialsDecrypt(key awskms.IKey, grantee awsiam.IGrantable, stage table.Stage) {
	grantCredentials(key, grantee, stage, "kms:Decrypt")
}

func grantCredentials(key awskms.IKey, grantee awsiam.IGrantable, stage table.Stage, action string) {
	cond := CredentialsCondition(stage)
	grantee.GrantPrincipal().AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings(action),
		Resources:  jsii.Strings(*key.KeyArn()),
		Conditions: &cond,
	}))
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings(action),
		Principals: &[]awsiam.IPrincipal{grantee.GrantPrincipal()},
		Resources:  jsii.Strings("*"),
		Conditions: &cond,
	}), jsii.Bool(true))
}
