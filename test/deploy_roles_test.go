package test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/test/iameval"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deployRole returns the trust and permissions policies of a stage's deploy
// role in the bootstrap stack, resolved for env.
func deployRole(t *testing.T, stage table.Stage, env iameval.Env) (trust, perms any) {
	t.Helper()
	trust, perms, _ = bootstrapRole(t, config.DeployRoleName(stage), env)
	return trust, perms
}

// bootstrapRole returns the trust policy, the one policy and the managed
// policy ARNs of the role named name in the unpinned account's bootstrap
// stack, resolved for env.
func bootstrapRole(t *testing.T, name string, env iameval.Env) (trust, perms any, managed []string) {
	t.Helper()
	tmpl, ok := asm.Bootstrap[config.DefaultBootstrapAccount]
	require.True(t, ok, "bootstrap stack of the unpinned account")
	res, _ := tmpl["Resources"].(map[string]any)
	var roleID string
	var arns []any
	for id, r := range tmpl.Resources("AWS::IAM::Role") {
		props, _ := r["Properties"].(map[string]any)
		if props["RoleName"] == name {
			roleID = id
			trust = props["AssumeRolePolicyDocument"]
			arns, _ = props["ManagedPolicyArns"].([]any)
		}
	}
	require.NotEmpty(t, roleID, "role %s", name)
	var docs []any
	for _, p := range tmpl.Resources("AWS::IAM::Policy") {
		props, _ := p["Properties"].(map[string]any)
		for _, r := range props["Roles"].([]any) {
			if ref, _ := r.(map[string]any)["Ref"].(string); ref == roleID {
				docs = append(docs, props["PolicyDocument"])
			}
		}
	}
	require.Len(t, docs, 1, "%s: one policy on the role", name)
	trust, err := iameval.Resolve(trust, res, env)
	require.NoError(t, err)
	perms, err = iameval.Resolve(docs[0], res, env)
	require.NoError(t, err)
	for _, a := range arns {
		v, err := iameval.Resolve(a, res, env)
		require.NoError(t, err)
		s, ok := v.(string)
		require.True(t, ok, "%s: managed policy %v", name, v)
		managed = append(managed, s)
	}
	return trust, perms, managed
}

// TestDeployRoleTrust: only this repository's workflow, in the stage's
// GitHub environment (prod: on main only), may assume a stage's deploy
// role; a pull request, another repository, another environment, another
// branch and another audience are denied.
func TestDeployRoleTrust(t *testing.T) {
	env := iameval.Env{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	provider := "arn:aws:iam::123456789012:oidc-provider/" + config.GitHubOIDCHost
	repo := config.GitHubRepository
	assume := func(trust any, sub, aud string) iameval.Decision {
		d, err := iameval.Evaluate(trust, iameval.Request{Principal: provider, Action: "sts:AssumeRoleWithWebIdentity",
			Context: map[string]string{config.GitHubOIDCHost + ":sub": sub, config.GitHubOIDCHost + ":aud": aud}})
		require.NoError(t, err)
		return d
	}
	for _, stage := range []table.Stage{table.Dev, table.Stg, table.Prod} {
		trust, _ := deployRole(t, stage, env)
		s := string(stage)
		other := "stage"
		if stage == table.Stg {
			other = "prod"
		}
		for _, tt := range []struct {
			name, sub, aud string
			want           iameval.Decision
		}{
			{"this repository, its environment, main", config.OIDCSubject(repo, s, "refs/heads/main"), config.GitHubOIDCAudience, iameval.Allow},
			{"a pull request", fmt.Sprintf("repo:%s:pull_request:ref:refs/pull/7/merge", repo), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"a pull request's ref in the environment", config.OIDCSubject(repo, s, "refs/pull/7/merge"), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"another repository", config.OIDCSubject("someone/dynastack", s, "refs/heads/main"), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"a repository whose name extends this one's", config.OIDCSubject(repo+"-fork", s, "refs/heads/main"), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"another environment", config.OIDCSubject(repo, other, "refs/heads/main"), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"no environment", fmt.Sprintf("repo:%s:ref:refs/heads/main", repo), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"a tag", config.OIDCSubject(repo, s, "refs/tags/v1"), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"another audience", config.OIDCSubject(repo, s, "refs/heads/main"), "sigstore", iameval.ImplicitDeny},
		} {
			assert.Equal(t, tt.want, assume(trust, tt.sub, tt.aud), "%s deploy role: %s (sub %s)", stage, tt.name, tt.sub)
		}
		branch := assume(trust, config.OIDCSubject(repo, s, "refs/heads/feature"), config.GitHubOIDCAudience)
		if stage == table.Prod {
			assert.Equal(t, iameval.ImplicitDeny, branch, "prod deploy role: another branch")
		} else {
			assert.Equal(t, iameval.Allow, branch, "%s deploy role: another branch of this repository in its environment (the environment's rules narrow it)", stage)
		}
	}
}

// TestDeployRoleMayOnlyAssumeBootstrapRoles: the deploy role's own policy
// allows assuming the CDK bootstrap roles of its account and nothing else.
func TestDeployRoleMayOnlyAssumeBootstrapRoles(t *testing.T) {
	env := iameval.Env{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	_, perms := deployRole(t, table.Prod, env)
	call := func(action, resource string) iameval.Decision {
		d, err := iameval.Evaluate(perms, iameval.Request{Action: action, Resource: resource})
		require.NoError(t, err)
		return d
	}
	for _, kind := range config.CDKBootstrapRoles {
		arn := fmt.Sprintf("arn:aws:iam::123456789012:role/cdk-%s-%s-role-123456789012-us-east-1", config.CDKQualifier, kind)
		assert.Equal(t, iameval.Allow, call("sts:AssumeRole", arn), "assume %s", arn)
	}
	for _, tt := range []struct{ action, resource string }{
		{"sts:AssumeRole", "arn:aws:iam::123456789012:role/Admin"},
		{"sts:AssumeRole", "arn:aws:iam::123456789012:role/cdk-" + config.CDKQualifier + "-cfn-exec-role-123456789012-us-east-1"},
		{"sts:AssumeRole", "arn:aws:iam::999999999999:role/cdk-" + config.CDKQualifier + "-deploy-role-999999999999-us-east-1"},
		{"sts:AssumeRole", "arn:aws:iam::123456789012:role/cdk-othrqualf-deploy-role-123456789012-us-east-1"},
		{"cloudformation:CreateStack", "*"},
		{"iam:CreateRole", "*"},
		{"s3:PutObject", "arn:aws:s3:::cdk-" + config.CDKQualifier + "-assets-123456789012-us-east-1/x"},
	} {
		assert.Equal(t, iameval.ImplicitDeny, call(tt.action, tt.resource), "%s on %s", tt.action, tt.resource)
	}
	assert.True(t, strings.HasPrefix(config.DeployRoleName(table.Prod), "dynastack-deploy-"), "role name")
}

// TestDriftRoleTrust: only the drift workflow's detection job may assume
// a stage's drift role: this repository, in no GitHub environment, on
// main (where its schedule runs). A job in a stage's environment (which
// may deploy), another branch, a pull request, another repository and
// another audience are denied.
func TestDriftRoleTrust(t *testing.T) {
	env := iameval.Env{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	provider := "arn:aws:iam::123456789012:oidc-provider/" + config.GitHubOIDCHost
	repo := config.GitHubRepository
	for _, stage := range []table.Stage{table.Dev, table.Stg, table.Prod} {
		trust, _, _ := bootstrapRole(t, config.DriftRoleName(stage), env)
		for _, tt := range []struct {
			name, sub, aud string
			want           iameval.Decision
		}{
			{"the drift job on main", config.OIDCBranchSubject(repo, "refs/heads/main"), config.GitHubOIDCAudience, iameval.Allow},
			{"the drift job run on another branch", config.OIDCBranchSubject(repo, "refs/heads/feature"), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"a job in the stage's environment", config.OIDCSubject(repo, string(stage), "refs/heads/main"), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"a pull request", fmt.Sprintf("repo:%s:pull_request:ref:refs/pull/7/merge", repo), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"another repository", config.OIDCBranchSubject("someone/dynastack", "refs/heads/main"), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"a tag", config.OIDCBranchSubject(repo, "refs/tags/v1"), config.GitHubOIDCAudience, iameval.ImplicitDeny},
			{"another audience", config.OIDCBranchSubject(repo, "refs/heads/main"), "sigstore", iameval.ImplicitDeny},
		} {
			d, err := iameval.Evaluate(trust, iameval.Request{Principal: provider, Action: "sts:AssumeRoleWithWebIdentity",
				Context: map[string]string{config.GitHubOIDCHost + ":sub": tt.sub, config.GitHubOIDCHost + ":aud": tt.aud}})
			require.NoError(t, err)
			assert.Equal(t, tt.want, d, "%s drift role: %s (sub %s)", stage, tt.name, tt.sub)
		}
	}
}

// TestDriftRoleReadsConfigurationNotData: the drift role holds AWS's
// ReadOnlyAccess (CloudFormation reads each resource with the caller's
// permissions to compare it) and nothing else that allows; its own policy
// refuses the reads of stored data that ReadOnlyAccess would allow, and
// none of the configuration reads drift detection makes.
func TestDriftRoleReadsConfigurationNotData(t *testing.T) {
	env := iameval.Env{Partition: "aws", Region: "us-east-1", Account: "123456789012"}
	_, perms, managed := bootstrapRole(t, config.DriftRoleName(table.Prod), env)
	assert.Equal(t, []string{"arn:aws:iam::aws:policy/ReadOnlyAccess"}, managed, "managed policies")
	call := func(action, resource string) iameval.Decision {
		d, err := iameval.Evaluate(perms, iameval.Request{Action: action, Resource: resource})
		require.NoError(t, err)
		return d
	}
	tbl := "arn:aws:dynamodb:us-east-1:123456789012:table/itsm-tickets-prod"
	for _, tt := range []struct{ action, resource string }{
		{"dynamodb:GetItem", tbl}, {"dynamodb:Query", tbl + "/index/gsi1"}, {"dynamodb:Scan", tbl},
		{"dynamodb:BatchGetItem", tbl}, {"dynamodb:PartiQLSelect", tbl},
		{"dynamodb:GetRecords", tbl + "/stream/2026-01-01T00:00:00.000"},
		{"sqs:ReceiveMessage", "arn:aws:sqs:us-east-1:123456789012:rezagent-messages-prod"},
		{"logs:FilterLogEvents", "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/itsm"},
		{"logs:GetLogEvents", "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/itsm:log-stream:x"},
		{"logs:StartQuery", "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/itsm"},
		{"ssm:GetParameter", "arn:aws:ssm:us-east-1:123456789012:parameter/rezagent/ntfy"},
		{"secretsmanager:GetSecretValue", "arn:aws:secretsmanager:us-east-1:123456789012:secret:alarms-webhook"},
		{"kms:Decrypt", "arn:aws:kms:us-east-1:123456789012:key/1"},
		{"s3:GetObject", "arn:aws:s3:::cdk-hnb659fds-assets-123456789012-us-east-1/x.zip"},
	} {
		assert.Equal(t, iameval.ExplicitDeny, call(tt.action, tt.resource), "%s on %s: stored data", tt.action, tt.resource)
	}
	for _, tt := range []struct{ action, resource string }{
		{"cloudformation:DetectStackDrift", "arn:aws:cloudformation:us-east-1:123456789012:stack/prod-itsm/1"},
		{"cloudformation:DescribeStackResourceDrifts", "*"},
		{"dynamodb:DescribeTable", tbl}, {"dynamodb:DescribeContinuousBackups", tbl}, {"dynamodb:DescribeTimeToLive", tbl},
		{"lambda:GetFunction", "arn:aws:lambda:us-east-1:123456789012:function:itsm"},
		{"iam:GetRole", "arn:aws:iam::123456789012:role/x"},
		{"sqs:GetQueueAttributes", "arn:aws:sqs:us-east-1:123456789012:rezagent-messages-prod"},
		{"kms:GetKeyPolicy", "arn:aws:kms:us-east-1:123456789012:key/1"},
	} {
		assert.Equal(t, iameval.ImplicitDeny, call(tt.action, tt.resource), "%s on %s: a configuration read, left to ReadOnlyAccess", tt.action, tt.resource)
	}
	for _, action := range []string{"sts:AssumeRole", "cloudformation:UpdateStack", "dynamodb:PutItem"} {
		assert.NotEqual(t, iameval.Allow, call(action, "*"), "%s: the role's own policy allows nothing", action)
	}
}
