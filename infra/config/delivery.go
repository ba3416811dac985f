package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/dynastack/dynastack/constructs/table"
)

// GitHubRepository is the repository whose workflows deploy the app
// (owner/name): the only one the deploy roles trust.
const GitHubRepository = "dynastack/dynastack"

// GitHub's OIDC provider for Actions, and the audience its tokens carry
// for AWS (aws-actions/configure-aws-credentials asks for it).
const (
	GitHubOIDCHost     = "token.actions.githubusercontent.com"
	GitHubOIDCAudience = "sts.amazonaws.com"
)

// ReleaseBranch is the only branch whose workflow may deploy prod.
const ReleaseBranch = "main"

// OIDCSubject is the sub claim of a GitHub Actions token for a job in a
// GitHub environment on a Git ref, under the subject template the
// repository sets (docs/deploying.md: include_claim_keys repo, context,
// ref): repo:<owner/name>:environment:<environment>:ref:<ref>. A job
// without an environment (a pull request's) has context
// pull_request or ref:<ref> instead, which no deploy role trusts.
func OIDCSubject(repository, environment, ref string) string {
	return fmt.Sprintf("repo:%s:environment:%s:ref:%s", repository, environment, ref)
}

// OIDCBranchSubject is the sub claim of a GitHub Actions token for a job
// in no environment, on ref, under the same subject template: the context
// of such a job is ref:<ref>, then the ref claim follows
// (repo:<owner/name>:ref:<ref>:ref:<ref>). The drift workflow's detection
// job is one, scheduled on ReleaseBranch.
func OIDCBranchSubject(repository, ref string) string {
	return fmt.Sprintf("repo:%s:ref:%s:ref:%s", repository, ref, ref)
}

// DeployRef is the ref pattern a stage's deploy role trusts: any branch
// in dev and stage (the GitHub environment's own rules narrow it), only
// ReleaseBranch in prod. Tags and pull requests' refs match none.
func DeployRef(stage table.Stage) string {
	if stage == table.Prod {
		return "refs/heads/" + ReleaseBranch
	}
	return "refs/heads/*"
}

// DeployRoleName is the deploy role of a stage, in its bootstrap stack.
func DeployRoleName(stage table.Stage) string { return "dynastack-deploy-" + string(stage) }

// DriftRoleName is the read-only role a stage's drift detection runs
// under, in its bootstrap stack (drift.yml, make drift).
func DriftRoleName(stage table.Stage) string { return "dynastack-drift-" + string(stage) }

// CDKQualifier is the qualifier of the CDK bootstrap every target account
// runs (cdk bootstrap's default): the deploy roles may assume its roles
// only.
const CDKQualifier = "hnb659fds"

// CDKBootstrapRoles are the bootstrap roles a deploy assumes, by the
// middle of their name: cdk-<qualifier>-<kind>-role-<account>-<region>.
var CDKBootstrapRoles = []string{"deploy", "file-publishing", "image-publishing", "lookup"}

// DefaultBootstrapAccount names the bootstrap stack of the stages that pin
// no account (environment-agnostic: it deploys into whichever account the
// credentials reach, as the stages do).
const DefaultBootstrapAccount = "default"

// BootstrapAccounts groups the stages by the account their deploy role
// lives in: the stage's Account, or DefaultBootstrapAccount. The role may
// assume the bootstrap roles of every account the stage's services use
// (TargetAccounts).
func BootstrapAccounts(stages []Stage) map[string][]Stage {
	out := map[string][]Stage{}
	for _, s := range stages {
		home := s.Account
		if home == "" {
			home = DefaultBootstrapAccount
		}
		out[home] = append(out[home], s)
	}
	return out
}

// TargetAccounts are the accounts the stage's stacks deploy to, sorted;
// "" stands for the stage's own unpinned account.
func (s Stage) TargetAccounts() []string {
	set := map[string]bool{}
	for _, svc := range serviceNames() {
		set[s.PlacementOf(svc).Account] = true
	}
	return slices.Sorted(maps.Keys(set))
}
