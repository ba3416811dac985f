// Package placement synthesizes a stage whose services live in different
// accounts and Regions (config.Stage.Services) with every check of the
// app's synth, and reads each stack's environment from the assembly.
package placement

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
	agenticpmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/catalog"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/test/cdkapp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	accountA = "111111111111"
	accountB = "222222222222"
)

// placed is prod with itsm in us-east-1 of account A and agenticpm in
// ap-southeast-2 of account B; the other services keep the stage's
// (environment-agnostic) placement.
func placed() config.Stage {
	s, err := config.Lookup("prod")
	if err != nil {
		panic(err)
	}
	s.Services = map[string]config.Placement{
		itsmcontract.Name:      {Account: accountA, Region: config.ITSMDocumentRegion},
		agenticpmcontract.Name: {Account: accountB, Region: "ap-southeast-2"},
	}
	return s
}

var (
	asm      *cdkapp.Assembly
	synthErr error
)

// One synth for the package (jsii is not goroutine-safe and slow to start).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dynastack-placement-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	asm, synthErr = cdkapp.Synth(dir, cdkapp.Options{Stages: []config.Stage{placed()}, Checks: true})
	jsii.Close()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestServicesWhereTheyBelong: each placed stack carries its account and
// Region, the others stay environment-agnostic, and every check of the
// synth passes (cdk-nag, dynastack's table and IAM checks, the Control
// Tower controls; CloudFormation validation unless CDK_VALIDATION=false).
func TestServicesWhereTheyBelong(t *testing.T) {
	require.NoError(t, synthErr, "synth of prod with placed services")
	assert.Empty(t, asm.Errors, "every check passes")
	want := map[string]string{
		itsmcontract.Name:      "aws://" + accountA + "/us-east-1",
		agenticpmcontract.Name: "aws://" + accountB + "/ap-southeast-2",
	}
	stacks := asm.Stacks["prod"]
	require.Len(t, stacks, len(catalog.Services()), "one stack per service")
	for _, c := range catalog.Services() {
		env, ok := want[c.Name]
		if !ok {
			env = "aws://unknown-account/unknown-region"
		}
		assert.Equal(t, env, stacks[c.Name].Environment, "%s: environment", c.Name)
	}
}

// TestNothingCrossesAStack: no template imports another's export or
// exports anything, so a stack deploys alone in its account.
func TestNothingCrossesAStack(t *testing.T) {
	require.NoError(t, synthErr)
	for id, tmpl := range asm.Templates["prod"] {
		b, err := json.Marshal(tmpl)
		require.NoError(t, err)
		raw := string(b)
		assert.NotContains(t, raw, "Fn::ImportValue", "%s: imports another stack's value", id)
		outputs, _ := tmpl["Outputs"].(map[string]any)
		for name, o := range outputs {
			_, exported := o.(map[string]any)["Export"]
			assert.False(t, exported, "%s: output %s is exported", id, name)
		}
		// The stage's overview dashboard (in the catalog's first service's
		// stack) graphs the other accounts' metrics through CloudWatch
		// cross-account observability: an account id there is a metric's
		// accountId in the dashboard body, which no deployment depends on.
		if id == catalog.Services()[0].Name {
			for _, acct := range []string{accountA, accountB} {
				graphed := `\"accountId\":\"` + acct + `\"`
				assert.Contains(t, raw, graphed, "%s: the overview graphs account %s's metrics", id, acct)
				raw = strings.ReplaceAll(raw, graphed, "")
			}
		}
		assert.False(t, strings.Contains(raw, accountA) && id != itsmcontract.Name, "%s: names account A", id)
		assert.False(t, strings.Contains(raw, accountB) && id != agenticpmcontract.Name, "%s: names account B", id)
	}
}

// TestPlacedAccountsHoldTheDriftRole: the CLI's cdk drift reads a stack
// with credentials of the stack's own account, so each account that hosts
// a placed service gets a bootstrap stack of its own, in that account,
// with GitHub's OIDC provider and the stage's drift role: the same role
// as in the stage's home account (trust, ReadOnlyAccess, the deny of
// stored-data reads: test/deploy_roles_test.go), and no deploy role (the
// home account's deploy role assumes the CDK bootstrap roles there).
func TestPlacedAccountsHoldTheDriftRole(t *testing.T) {
	require.NoError(t, synthErr)
	home, ok := asm.Bootstrap[config.DefaultBootstrapAccount]
	require.True(t, ok, "the stage's home bootstrap stack")
	drift := config.DriftRoleName("prod")
	want := bootstrapRole(t, home, drift)
	for acct, region := range map[string]string{accountA: config.ITSMDocumentRegion, accountB: "ap-southeast-2"} {
		tmpl, ok := asm.Bootstrap[acct]
		require.True(t, ok, "a bootstrap stack for account %s", acct)
		assert.Equal(t, "aws://"+acct+"/"+region, asm.BootstrapStacks[acct].Environment, "%s: deployed into the account", acct)
		assert.Len(t, tmpl.Resources("AWS::IAM::OIDCProvider"), 1, "%s: GitHub's OIDC provider", acct)
		roles := tmpl.Resources("AWS::IAM::Role")
		require.Len(t, roles, 1, "%s: the drift role only", acct)
		assert.Equal(t, want, bootstrapRole(t, tmpl, drift), "%s: the home account's drift role, again", acct)
	}
	assert.Len(t, asm.Bootstrap, 3, "the home account's stack and one per placed account")
}

// role is what makes a bootstrap role what it is.
type role struct {
	Trust, Policy, Managed any
}

// bootstrapRole finds the role named name in tmpl with its one policy.
func bootstrapRole(t *testing.T, tmpl cdkapp.Template, name string) role {
	t.Helper()
	var id string
	var r role
	for lid, res := range tmpl.Resources("AWS::IAM::Role") {
		props, _ := res["Properties"].(map[string]any)
		if props["RoleName"] == name {
			id, r.Trust, r.Managed = lid, props["AssumeRolePolicyDocument"], props["ManagedPolicyArns"]
		}
	}
	require.NotEmpty(t, id, "role %s", name)
	for _, p := range tmpl.Resources("AWS::IAM::Policy") {
		props, _ := p["Properties"].(map[string]any)
		for _, ref := range props["Roles"].([]any) {
			if ref.(map[string]any)["Ref"] == id {
				require.Nil(t, r.Policy, "%s: one policy", name)
				r.Policy = props["PolicyDocument"]
			}
		}
	}
	require.NotNil(t, r.Policy, "%s: its policy", name)
	return r
}
