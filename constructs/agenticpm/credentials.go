package agenticpm

import (
	"fmt"
	"slices"
	"strings"

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
//
// The key policy is not CDK's default (the account root allowed kms:*,
// which let any principal of the account whose IAM policy allows
// kms:Decrypt on * decrypt credentials without their encryption context).
// It says:
//
//   - the account administers the key through IAM (KeyAdministration):
//     every management action (kms:Create*, Describe*, Enable*, List*,
//     Put*, Update*, Revoke*, Disable*, Get*, Delete*, TagResource,
//     UntagResource, ScheduleKeyDeletion, CancelKeyDeletion,
//     RotateKeyOnDemand: CDK's Key.grantAdmin actions and on-demand
//     rotation), so kms:PutKeyPolicy stays with the account and nobody
//     is locked out;
//   - kms:Decrypt is delegated to IAM only under CredentialsCondition
//     (CredentialsDecryptThroughIAM): a principal's own policy decides
//     which integrations it decrypts (GrantCredentialsDecrypt), and no IAM
//     policy, however broad, decrypts without a credentials context of
//     this stage;
//   - no other cryptographic action (kms:Encrypt, ReEncrypt*,
//     GenerateDataKey*) is delegated to IAM: a principal uses it only when
//     the key policy names it, as GrantCredentialsEncrypt does for the
//     API's role;
//   - kms:CreateGrant is denied but for AWS services' own resources.
//
// Each GrantCredentials… call on this key adds a statement naming its
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
	account := []awsiam.IPrincipal{awsiam.NewAccountRootPrincipal()}
	decrypt := CredentialsCondition(stage)
	policy := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("KeyAdministration"),
			Principals: &account,
			Actions:    jsii.Strings(keyAdminActions...),
			Resources:  jsii.Strings("*"),
		}),
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("CredentialsDecryptThroughIAM"),
			Principals: &account,
			Actions:    jsii.Strings("kms:Decrypt"),
			Resources:  jsii.Strings("*"),
			Conditions: &decrypt,
		}),
	}})
	key := awskms.NewKey(scope, jsii.String(id), &awskms.KeyProps{
		Alias:             jsii.String(contract.CredentialsKeyAlias(string(stage))),
		Description:       jsii.String("AgenticPM " + string(stage) + ": integration credentials (configEncrypted); encryption context integration + stage"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     removal,
		PendingWindow:     window,
		// Replaces CDK's default key policy (the account root's kms:*);
		// see above.
		Policy: policy,
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

// keyAdminActions are the account's through IAM on a credentials key:
// CDK's Key.grantAdmin actions (aws-kms's ADMIN_ACTIONS) and
// kms:RotateKeyOnDemand. None of them encrypts or decrypts; kms:Put*
// keeps kms:PutKeyPolicy with the account, so the key's policy can always
// be changed again.
var keyAdminActions = []string{
	"kms:Create*", "kms:Describe*", "kms:Enable*", "kms:List*", "kms:Put*",
	"kms:Update*", "kms:Revoke*", "kms:Disable*", "kms:Get*", "kms:Delete*",
	"kms:TagResource", "kms:UntagResource", "kms:ScheduleKeyDeletion",
	"kms:CancelKeyDeletion", "kms:RotateKeyOnDemand",
}

// CredentialsCondition is the IAM condition every use of the credentials
// key is granted under: an encryption context of exactly the keys
// integration (one of the document's integrations) and stage (this
// stage), as the API encrypts with. A principal granted under it cannot
// use the key for anything else, nor for another stage's credentials.
// GrantCredentialsDecrypt narrows it to the integrations it names.
func CredentialsCondition(stage table.Stage) map[string]any {
	return credentialsCondition(stage, contract.Integrations)
}

func credentialsCondition(stage table.Stage, integrations []string) map[string]any {
	names := make([]any, len(integrations))
	for i, n := range integrations {
		names[i] = n
	}
	return map[string]any{
		"StringEquals": map[string]any{
			"kms:EncryptionContext:" + contract.ContextStage:       string(stage),
			"kms:EncryptionContext:" + contract.ContextIntegration: names,
		},
		"ForAllValues:StringEquals": map[string]any{
			"kms:EncryptionContextKeys": []any{contract.ContextIntegration, contract.ContextStage},
		},
	}
}

// GrantCredentialsEncrypt lets grantee (the API's role) call kms:Encrypt
// with key for every integration, only under CredentialsCondition: in its
// identity policy and, naming it, in the key policy. The key policy of
// NewCredentialsKey delegates no kms:Encrypt to IAM, so the grant works
// on the key of this app only; on an imported key the identity policy
// alone does not let the role encrypt.
func GrantCredentialsEncrypt(key awskms.IKey, grantee awsiam.IGrantable, stage table.Stage) {
	grantCredentials(key, grantee, stage, "kms:Encrypt", contract.Integrations)
}

// GrantCredentialsDecrypt lets grantee (an agent's role) call kms:Decrypt
// with key for the credentials of the named integrations only, and
// returns the grant on its identity policy.
//
// The statement's condition is CredentialsCondition narrowed to
// integrations: StringEquals kms:EncryptionContext:integration one of
// integrations and kms:EncryptionContext:stage stage, and
// ForAllValues:StringEquals kms:EncryptionContextKeys [integration,
// stage]. So the role decrypts what GET /integrations/{name} returns for
// those names (configEncrypted, with the encryptionContext to pass) and
// nothing else encrypted under the key: not another integration's
// credentials, not another stage's, nothing without that context.
//
//   - integrations: at least one, each one of contract.Integrations
//     (jira, asana, outlook, resend), none twice. There is no default and
//     no "all": a role that needs every integration names each one.
//   - stage: one of table.Stages, the key's stage (the encryption context
//     names it).
//   - key: the stage's credentials key. When it is this app's
//     (NewCredentialsKey), the key policy also gets a statement naming
//     the role under the same condition. In another stack take it from
//     the AgenticPM stack's CredentialsKeyArn output; an imported key's
//     policy cannot be changed here, and need not be: it delegates
//     kms:Decrypt to IAM under CredentialsCondition, so the role's policy
//     decides which integrations it reads.
//
// A platform team grants an agent's role Jira's credentials in prod:
//
//	key := awskms.Key_FromKeyArn(stack, jsii.String("Credentials"), jsii.String(keyArn))
//	if _, err := agenticpm.GrantCredentialsDecrypt(key, agentRole, table.Prod, "jira"); err != nil {
//		return err
//	}
//
// The error names the value refused and what to pass instead; nothing is
// granted then.
func GrantCredentialsDecrypt(key awskms.IKey, grantee awsiam.IGrantable, stage table.Stage, integrations ...string) (awsiam.Grant, error) {
	const where = "agenticpm: GrantCredentialsDecrypt"
	switch {
	case key == nil:
		return nil, fmt.Errorf("%s: key is nil; pass the stage's credentials key (NewCredentialsKey, or awskms.Key_FromKeyArn with the CredentialsKeyArn output)", where)
	case grantee == nil:
		return nil, fmt.Errorf("%s: grantee is nil; pass the role that decrypts", where)
	case len(integrations) == 0:
		return nil, fmt.Errorf("%s: no integration named; name each integration whose credentials the role reads, of %s", where, strings.Join(contract.Integrations, ", "))
	}
	if _, err := table.ParseStage(string(stage)); err != nil {
		return nil, fmt.Errorf("%s: stage %q is not one of %v; pass the stage of the key (the encryption context names it)", where, stage, table.Stages())
	}
	for i, n := range integrations {
		if !slices.Contains(contract.Integrations, n) {
			return nil, fmt.Errorf("%s: integration %q is not one of %s (contract.Integrations); name an integration with stored credentials, as GET /integrations/{name} does", where, n, strings.Join(contract.Integrations, ", "))
		}
		if slices.Contains(integrations[:i], n) {
			return nil, fmt.Errorf("%s: integration %q is named twice; name it once", where, n)
		}
	}
	return grantCredentials(key, grantee, stage, "kms:Decrypt", integrations), nil
}

// grantCredentials adds action under the credentials condition of
// integrations to grantee's policy and, naming grantee, to key's policy
// when key is this app's (a no-op on an imported key).
func grantCredentials(key awskms.IKey, grantee awsiam.IGrantable, stage table.Stage, action string, integrations []string) awsiam.Grant {
	cond := credentialsCondition(stage, integrations)
	conds := make(map[string]*map[string]any, len(cond))
	for op, keys := range cond {
		m := keys.(map[string]any)
		conds[op] = &m
	}
	grant := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      grantee,
		Actions:      jsii.Strings(action),
		ResourceArns: jsii.Strings(*key.KeyArn()),
		Conditions:   &conds,
	})
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings(action),
		Principals: &[]awsiam.IPrincipal{grantee.GrantPrincipal()},
		Resources:  jsii.Strings("*"),
		Conditions: &cond,
	}), jsii.Bool(true))
	return grant
}
