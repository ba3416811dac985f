package test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/stak"
	"github.com/dynastack/dynastack/test/iameval"
)

// grantTenants are the tenants granted in the host stack: a plain key,
// one that extends it, one it extends, one of every character a key
// may hold, and keys with braces (characters of the key, never a
// parameter of the grant's path: "{acme}" once granted every tenant,
// "ac{me}" every tenant starting with "ac").
var grantTenants = []string{"acme", "acme2", "ac", "a.b-c_d:e@f+g=h,i~j", "{acme}", "ac{me}"}

// hostAPIID stands for the Stak API's id in the host stack's grants; the
// test writes each stage template's API in its place.
const hostAPIID = "STAKAPI"

// hostGrants maps each tenant of grantTenants to the policy document
// stak.GrantTenantInvoke gave its role (intrinsics resolved), synthesized
// by TestMain beside the app (jsii runs once per test binary).
var hostGrants map[string]any

// synthHostGrants builds a host stack as another team would: one role per
// tenant, each granted with stak.GrantTenantInvoke on the imported API.
func synthHostGrants() (map[string]any, error) {
	dir, err := os.MkdirTemp("", "dynastack-host-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(dir)})
	stack := awscdk.NewStack(app, jsii.String("Host"), nil)
	api := awsapigatewayv2.HttpApi_FromHttpApiAttributes(stack, jsii.String("Stak"), &awsapigatewayv2.HttpApiAttributes{HttpApiId: jsii.String(hostAPIID)})
	for i, tenant := range grantTenants {
		role := awsiam.NewRole(stack, jsii.String(fmt.Sprintf("Host%dRole", i)), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
		if _, err := stak.GrantTenantInvoke(api, role, tenant); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(app.Synth(nil).GetStackArtifact(jsii.String("Host")).Template())
	if err != nil {
		return nil, err
	}
	var tmpl map[string]any
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		return nil, err
	}
	resources, _ := tmpl["Resources"].(map[string]any)
	out := map[string]any{}
	for _, r := range resources {
		r := r.(map[string]any)
		if r["Type"] != "AWS::IAM::Policy" {
			continue
		}
		p := r["Properties"].(map[string]any)
		roles := p["Roles"].([]any)
		ref := roles[0].(map[string]any)["Ref"].(string)
		m := regexp.MustCompile(`^Host(\d+)Role[0-9A-F]{8}$`).FindStringSubmatch(ref)
		if m == nil {
			return nil, fmt.Errorf("policy of %s", ref)
		}
		i, _ := strconv.Atoi(m[1])
		doc, err := iameval.Resolve(p["PolicyDocument"], resources, deployEnv)
		if err != nil {
			return nil, err
		}
		out[grantTenants[i]] = doc
	}
	if len(out) != len(grantTenants) {
		return nil, fmt.Errorf("%d host policies for %d tenants", len(out), len(grantTenants))
	}
	return out, nil
}

// TestHostGrantsReachOnlyTheirTenant evaluates every execute-api:Invoke
// resource stak.GrantTenantInvoke generates against every route of every
// stage's Stak template, with IAM's wildcard semantics (test/iameval):
// a tenant's grant allows a SigV4 route exactly when it is a host route
// (IAM-authorized, under /tenants/{tenant}/) and the path's tenant is the
// grant's. Not the operators' /admin/… routes, not another tenant's paths
// (one that extends the tenant or that it extends included). JWT routes
// are authorized by the token alone, IAM policies are not consulted for
// them; the test checks that they are JWT routes.
func TestHostGrantsReachOnlyTheirTenant(t *testing.T) {
	param := regexp.MustCompile(`\{[^}+]+\+?\}`)
	samples := append([]string{"acme-evil"}, grantTenants...)
	evaluated := 0
	for stage, stacks := range asm.Templates {
		tmpl, ok := stacks["stak"]
		require.True(t, ok, "%s: no stak stack", stage)
		var apiID, stageName string
		for lid := range tmpl.Resources("AWS::ApiGatewayV2::Api") {
			apiID = lid
		}
		for _, st := range tmpl.Resources("AWS::ApiGatewayV2::Stage") {
			stageName, _ = props(st)["StageName"].(string)
		}
		require.NotEmpty(t, apiID, "%s/stak: API", stage)
		require.NotEmpty(t, stageName, "%s/stak: stage name", stage)
		hostRoutes := 0
		for _, r := range tmpl.Resources("AWS::ApiGatewayV2::Route") {
			key, _ := props(r)["RouteKey"].(string)
			method, path, _ := strings.Cut(key, " ")
			auth := props(r)["AuthorizationType"]
			if auth == "JWT" {
				assert.Contains(t, path, "/users/{uid}", "%s/stak: route %s is JWT-authorized but no end user's route", stage, key)
				continue
			}
			if !assert.Equal(t, "AWS_IAM", auth, "%s/stak: route %s authorization", stage, key) {
				continue
			}
			host := strings.HasPrefix(path, "/tenants/{tenant}/")
			if host {
				hostRoutes++
			}
			for _, pathTenant := range samples {
				// The other parameters first, then the tenant: a sample
				// tenant's braces are characters of its key.
				concrete := param.ReplaceAllStringFunc(path, func(p string) string {
					if p == "{tenant}" {
						return p
					}
					return strings.Trim(p, "{}+") + "1"
				})
				concrete = strings.Replace(concrete, "{tenant}", pathTenant, 1)
				arn := iameval.ARN(deployEnv, "execute-api", apiID+"/"+stageName+"/"+method+concrete)
				for _, grantTenant := range grantTenants {
					doc := withAPI(hostGrants[grantTenant], apiID)
					d, err := iameval.Evaluate(doc, iameval.Request{Action: "execute-api:Invoke", Resource: arn})
					require.NoError(t, err, "%s: grant of %s", stage, grantTenant)
					evaluated++
					assert.Equal(t, host && pathTenant == grantTenant, d == iameval.Allow, "%s: the grant of tenant %q on %s allowed (decision %v)", stage, grantTenant, arn, d)
				}
			}
		}
		assert.GreaterOrEqual(t, hostRoutes, 5, "%s/stak: host routes; the contract has 5", stage)
	}
	// Every resource names the stage and a method: nothing before the
	// path is a wildcard.
	for tenant, doc := range hostGrants {
		raw, _ := json.Marshal(doc)
		assert.NotContains(t, string(raw), hostAPIID+"/*", "grant of %s has a wildcard stage", tenant)
		assert.NotContains(t, string(raw), "/$default/*", "grant of %s has a wildcard method", tenant)

	}
	t.Logf("%d evaluations", evaluated)
}

// withAPI writes the stage template's API id into a host grant.
func withAPI(doc any, apiID string) any {
	raw, _ := json.Marshal(doc)
	var out any
	_ = json.Unmarshal([]byte(strings.ReplaceAll(string(raw), hostAPIID, apiID)), &out)
	return out
}
