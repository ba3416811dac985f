package stak_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/dynastack/dynastack/constructs/stak"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A host's role may invoke its own tenant's paths and nothing else; a
// tenant that would widen the resource is refused.
func TestGrantTenantInvoke(t *testing.T) {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Host"), &awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String("111122223333"), Region: jsii.String("eu-west-1")}})
	api := awsapigatewayv2.HttpApi_FromHttpApiAttributes(stack, jsii.String("Stak"), &awsapigatewayv2.HttpApiAttributes{HttpApiId: jsii.String("a1b2c3d4e5")})
	role := awsiam.NewRole(stack, jsii.String("Host"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	_, err := stak.GrantTenantInvoke(api, role, "acme")
	require.NoError(t, err)
	for _, bad := range []string{"", "*", "acme/*", "a b", "a#b", "ac?me", "a\xffb", "a\u00a0b", strings.Repeat("x", 129), "acm%65", "a%2Fb", "100%"} {
		_, err := stak.GrantTenantInvoke(api, role, bad)
		assert.Error(t, err, "tenant %q was granted", bad)
	}
	tmpl := app.Synth(nil).GetStackArtifact(jsii.String("Host")).Template()
	b, _ := json.Marshal(tmpl)
	got := string(b)
	for _, want := range []string{
		`:execute-api:eu-west-1:111122223333:a1b2c3d4e5/$default/PUT/tenants/acme/settings"`,
		`:execute-api:eu-west-1:111122223333:a1b2c3d4e5/$default/GET/tenants/acme/settings"`,
		`:execute-api:eu-west-1:111122223333:a1b2c3d4e5/$default/PUT/tenants/acme/inboxes/*"`,
		`:execute-api:eu-west-1:111122223333:a1b2c3d4e5/$default/GET/tenants/acme/inboxes/*"`,
		`:execute-api:eu-west-1:111122223333:a1b2c3d4e5/$default/POST/tenants/acme/inboxes/*/messages"`,
	} {
		assert.Contains(t, got, want, "policy")
	}
	// Neither the stage nor the method is a wildcard: a * before the path
	// would span '/' into /admin/….
	assert.NotContains(t, got, "a1b2c3d4e5/*", "a grant with a wildcard stage")
	assert.NotContains(t, got, "$default/*", "a grant with a wildcard method")
	assert.Equal(t, 1, strings.Count(got, "execute-api:Invoke"), "more than one grant: %s", got)
}

// A tenant holding "${" would put an IAM policy variable in the grant's
// resource: IAM substitutes ${aws:UserAgent}, ${aws:SourceIdentity},
// ${aws:PrincipalTag/…} … from the request at evaluation, so the host
// would choose per request which tenant its grant names (a User-Agent of
// "globex" reaching globex's paths). Such a tenant is refused; a '$', '{'
// or '}' that starts no variable is a plain character of the ARN and is
// granted.
func TestGrantTenantInvokeRefusesPolicyVariables(t *testing.T) {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Host"), &awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String("111122223333"), Region: jsii.String("eu-west-1")}})
	api := awsapigatewayv2.HttpApi_FromHttpApiAttributes(stack, jsii.String("Stak"), &awsapigatewayv2.HttpApiAttributes{HttpApiId: jsii.String("a1b2c3d4e5")})
	role := awsiam.NewRole(stack, jsii.String("Host"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	for _, tt := range []struct {
		tenant string
		ok     bool
	}{
		{"${aws:UserAgent}", false},
		{"${aws:SourceIdentity}", false},
		{"acme${aws:username}", false},
		{"${aws:PrincipalTag/tenant}", false},
		{"${*}", false},
		{"a${", false},
		{"$acme", true},
		{"ac{me}", true},
		{"a$b{c}", true},
	} {
		_, err := stak.GrantTenantInvoke(api, role, tt.tenant)
		if tt.ok {
			assert.NoError(t, err, "tenant %q", tt.tenant)
		} else if assert.Error(t, err, "tenant %q was granted: its resource names an IAM policy variable", tt.tenant) {
			assert.Contains(t, err.Error(), "${", "the error names what is refused")
		}
	}
}

// Braces are characters of a tenant key (the API takes "{x}" and "a{b}"
// like any other key), and the grant writes them as they are: a tenant's
// braces never become the * that stands for the other path parameters,
// which would grant "{x}" every tenant's paths and "a{b}" every tenant
// starting with "a".
func TestGrantTenantInvokeBracesAreLiteral(t *testing.T) {
	for _, tenant := range []string{"{x}", "a{b}", "ac{me}", "{tenant}", "x{inbox}y"} {
		app := awscdk.NewApp(nil)
		stack := awscdk.NewStack(app, jsii.String("Host"), &awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String("111122223333"), Region: jsii.String("eu-west-1")}})
		api := awsapigatewayv2.HttpApi_FromHttpApiAttributes(stack, jsii.String("Stak"), &awsapigatewayv2.HttpApiAttributes{HttpApiId: jsii.String("a1b2c3d4e5")})
		role := awsiam.NewRole(stack, jsii.String("Host"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
		_, err := stak.GrantTenantInvoke(api, role, tenant)
		require.NoError(t, err, "tenant %q", tenant)
		b, err := json.Marshal(app.Synth(nil).GetStackArtifact(jsii.String("Host")).Template())
		require.NoError(t, err)
		got := string(b)
		for _, want := range []string{
			`:a1b2c3d4e5/$default/PUT/tenants/` + tenant + `/settings"`,
			`:a1b2c3d4e5/$default/GET/tenants/` + tenant + `/settings"`,
			`:a1b2c3d4e5/$default/PUT/tenants/` + tenant + `/inboxes/*"`,
			`:a1b2c3d4e5/$default/POST/tenants/` + tenant + `/inboxes/*/messages"`,
			`:a1b2c3d4e5/$default/GET/tenants/` + tenant + `/inboxes/*/stats"`,
		} {
			assert.Contains(t, got, want, "grant of tenant %q", tenant)
		}
		assert.Equal(t, len(stak.HostRoutes()), strings.Count(got, "/tenants/"+tenant+"/"), "grant of tenant %q: every resource names the tenant as it is", tenant)
	}
}
