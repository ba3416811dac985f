package stak

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/constructs/stak/contract"
)

// MaxTenantLen is the longest tenant key the Stak API takes (the
// platform's bound on every path key, api.MaxPathKeyBytes).
const MaxTenantLen = 128

// tenantPrefix is the path every host route starts with.
const tenantPrefix = "/tenants/{tenant}/"

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// HostRoutes are the routes a host system's role is granted for its
// tenant: the contract's IAM (SigV4) routes under /tenants/{tenant}/. The
// operators' /admin/… routes are outside it, and the end users' routes
// under the same prefix take a JWT, which IAM grants do not open.
func HostRoutes() []service.Route {
	var out []service.Route
	for _, r := range contract.API.Routes {
		if r.Auth == service.IAM && strings.HasPrefix(r.Path, tenantPrefix) {
			out = append(out, r)
		}
	}
	return out
}

// GrantTenantInvoke lets grantee (a host system's role) call the Stak API's
// publisher routes of one tenant, and nothing else: execute-api:Invoke on
// one resource per host route (HostRoutes), each naming the API's stage
// ($default, service.APIStage), the method and the path with the tenant
// written out and every other parameter as *:
//
//	arn:aws:execute-api:<region>:<account>:<api-id>/$default/PUT/tenants/<tenant>/settings
//	arn:aws:execute-api:<region>:<account>:<api-id>/$default/POST/tenants/<tenant>/inboxes/*/messages
//
// IAM's * spans '/', so a pattern with a * before the path (the former
// …/*/*/tenants/<tenant>/*) also matched …/$default/POST/admin/tenants/<tenant>/…;
// these cannot, and test/host_grant_test.go proves against every route of
// every stage's template that each grant reaches exactly its tenant's
// host routes.
//
// api is the deployed Stak API, e.g. awsapigatewayv2.HttpApi_FromHttpApiAttributes
// with the ApiUrl output's id. tenant is refused when it could widen the
// resource or could never be a tenant key (the platform's key rule): empty,
// not UTF-8, over MaxTenantLen bytes, or holding '*', '?', '/', '#',
// whitespace or control characters, '%' (a percent-escape of another
// key's character), or "${" (IAM's policy variables: a resource naming
// ${aws:UserAgent} names whatever the request says).
func GrantTenantInvoke(api awsapigatewayv2.IHttpApi, grantee awsiam.IGrantable, tenant string) (awsiam.Grant, error) {
	switch {
	case tenant == "":
		return nil, fmt.Errorf("stak: GrantTenantInvoke: tenant is empty; pass the tenant key the host publishes for")
	case !utf8.ValidString(tenant):
		return nil, fmt.Errorf("stak: GrantTenantInvoke: tenant %q is not UTF-8; a tenant key is", tenant)
	case len(tenant) > MaxTenantLen:
		return nil, fmt.Errorf("stak: GrantTenantInvoke: tenant %.40q… is %d bytes; at most %d", tenant, len(tenant), MaxTenantLen)
	case strings.ContainsAny(tenant, "*?/#") || strings.ContainsFunc(tenant, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return nil, fmt.Errorf("stak: GrantTenantInvoke: tenant %q holds '*', '?', '/', '#', whitespace or a control character; a tenant key has none", tenant)
	case strings.Contains(tenant, "%"):
		// The resource API Gateway authorizes is built from the request's
		// path; whether a percent-escape there is read before or after
		// decoding, a '%' in the grant ("acm%65") could name another
		// tenant's key ("acme"). No grant is left to that reading.
		return nil, fmt.Errorf("stak: GrantTenantInvoke: tenant %q holds '%%', which a request path may carry as an escape of another character (\"acm%%65\" is \"acme\" decoded); grant a tenant key without '%%'", tenant)
	case strings.Contains(tenant, "${"):
		// In a policy's Resource IAM reads ${…} as a policy variable and
		// substitutes it from each request (${aws:UserAgent} is whatever
		// User-Agent the host sends), so the grant would name whichever
		// tenant the caller chooses.
		return nil, fmt.Errorf("stak: GrantTenantInvoke: tenant %q holds \"${\", which IAM reads as a policy variable substituted from each request (${aws:UserAgent}: any tenant the caller names); grant a tenant key without \"${\"", tenant)
	}
	var arns []*string
	for _, r := range HostRoutes() {
		// The tenant goes in after the other parameters became *: a
		// tenant's own braces ("{x}", "a{b}") are characters of its key,
		// not parameters to widen.
		path := pathParam.ReplaceAllStringFunc(r.Path, func(p string) string {
			if p == "{"+contract.ParamTenant.String()+"}" {
				return tenant
			}
			return "*"
		})
		arns = append(arns, api.ArnForExecuteApi(jsii.String(r.Method), jsii.String(path), jsii.String(service.APIStage)))
	}
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      grantee,
		Actions:      jsii.Strings("execute-api:Invoke"),
		ResourceArns: &arns,
	}), nil
}
