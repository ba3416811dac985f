package stak

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// MaxTenantLen is the longest tenant key the Stak API takes.
const MaxTenantLen = 128

// GrantTenantInvoke lets grantee (a host system's role) call the Stak API's
// publisher routes of one tenant: execute-api:Invoke on
// arn:aws:execute-api:<region>:<account>:<api-id>/*/*/tenants/<tenant>/*,
// any method, any stage. Nothing else: not another tenant's paths, and not
// the operators' /admin/… routes. The tenant's end-user routes lie under
// the same prefix but take a user's JWT, not SigV4, so the grant does not
// open them.
//
// api is the deployed Stak API, e.g. awsapigatewayv2.HttpApi_FromHttpApiAttributes
// with the ApiUrl output's id. tenant is refused when it could widen the
// resource or could never be a tenant key: empty, over MaxTenantLen bytes,
// or holding '*', '?', '/', '#', whitespace or control characters.
func GrantTenantInvoke(api awsapigatewayv2.IHttpApi, grantee awsiam.IGrantable, tenant string) (awsiam.Grant, error) {
	switch {
	case tenant == "":
		return nil, fmt.Errorf("stak: GrantTenantInvoke: tenant is empty; pass the tenant key the host publishes for")
	case len(tenant) > MaxTenantLen:
		return nil, fmt.Errorf("stak: GrantTenantInvoke: tenant %.40q… is %d bytes; at most %d", tenant, len(tenant), MaxTenantLen)
	case strings.ContainsAny(tenant, "*?/#") || strings.ContainsFunc(tenant, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return nil, fmt.Errorf("stak: GrantTenantInvoke: tenant %q holds '*', '?', '/', '#', whitespace or a control character; a tenant key has none", tenant)
	}
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      grantee,
		Actions:      jsii.Strings("execute-api:Invoke"),
		ResourceArns: jsii.Strings(*api.ArnForExecuteApi(nil, jsii.String("/tenants/"+tenant+"/*"), nil)),
	}), nil
}
