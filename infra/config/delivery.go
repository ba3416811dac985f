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

// HomeServices are the services whose stacks of this stage live in the
// stage's own account (a Region-only placement stays home), in catalog
// order: the stacks the stage's drift role checks (make drift).
func (s Stage) HomeServices() []string {
	var out []string
	for _, svc := range serviceNames() {
		if s.PlacementOf(svc).Account == s.Account {
			out = append(out, svc)
		}
	}
	return out
}

// PlacedAccounts groups the stages by each account, other than the
// stage's own, that hosts one of its services. The CLI's cdk drift reads
// a stack with the credentials it is given, in the stack's own account,
// so each such account's bootstrap stack holds the stage's drift role
// too (stacks.NewBootstrap), and the drift workflow checks the service
// there (PlacedDriftRuns).
func PlacedAccounts(stages []Stage) map[string][]Stage {
	out := map[string][]Stage{}
	for _, s := range stages {
		for _, acct := range s.TargetAccounts() {
			if acct != s.Account {
				out[acct] = append(out[acct], s)
			}
		}
	}
	return out
}

// PlacedDrift is one run of the drift workflow's detect-placed job: a
// service a stage places in another account, checked with the stage's
// drift role in that account.
type PlacedDrift struct {
	Stage   string `json:"stage"`
	Service string `json:"service"`
	// Account is the account the service's stack lives in.
	Account string `json:"account"`
	// Role is the ARN of the stage's drift role in the service's account.
	Role string `json:"role"`
	// Region is the service's Region; empty, the workflow's AWS_REGION.
	Region string `json:"region"`
}

// PlacedDriftRuns lists the services of stages placed in an account
// other than their stage's, by stage and service: what the drift
// workflow checks beside each stage's own account. None, for stages
// that place nothing elsewhere.
func PlacedDriftRuns(stages []Stage) []PlacedDrift {
	out := []PlacedDrift{}
	for _, s := range stages {
		for _, svc := range serviceNames() {
			p := s.PlacementOf(svc)
			if p.Account == s.Account {
				continue
			}
			out = append(out, PlacedDrift{
				Stage:   string(s.Name),
				Service: svc,
				Account: p.Account,
				Role:    fmt.Sprintf("arn:%s:iam::%s:role/%s", s.PartitionOf(), p.Account, DriftRoleName(s.Name)),
				Region:  p.Region,
			})
		}
	}
	return out
}
