package stacks

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/infra/config"
)

// Default stage throttling of every service API, requests per second.
const (
	throttleRate  = 100
	throttleBurst = 200
)

// accessLogFormat is one JSON object per request in HTTP API context
// variables. REST API names such as $context.resourcePath or
// $context.identity.user are empty in an HTTP API, which is why the
// standard-fields helper of the apigateway module does not fit: the route
// key, the caller (the IAM ARN of a SigV4 route, the token subject of a JWT
// route) and the errors of the authorizer and the integration are what a
// failed request is investigated with.
var accessLogFormat = func() string {
	b, err := json.Marshal(map[string]string{
		"requestId":               "$context.requestId",
		"extendedRequestId":       "$context.extendedRequestId",
		"requestTime":             "$context.requestTime",
		"routeKey":                "$context.routeKey",
		"method":                  "$context.httpMethod",
		"path":                    "$context.path",
		"protocol":                "$context.protocol",
		"status":                  "$context.status",
		"responseLength":          "$context.responseLength",
		"responseLatency":         "$context.responseLatency",
		"sourceIp":                "$context.identity.sourceIp",
		"userAgent":               "$context.identity.userAgent",
		"userArn":                 "$context.identity.userArn",
		"accountId":               "$context.identity.accountId",
		"tokenSubject":            "$context.authorizer.claims.sub",
		"tokenTenant":             "$context.authorizer.claims.tenant",
		"authorizerError":         "$context.authorizer.error",
		"error":                   "$context.error.message",
		"integrationStatus":       "$context.integration.status",
		"integrationLatency":      "$context.integration.latency",
		"integrationError":        "$context.integration.error",
		"integrationErrorMessage": "$context.integrationErrorMessage",
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// accessLogSettings implements awsapigatewayv2.IAccessLogSettings.
type accessLogSettings struct {
	destination awsapigatewayv2.IAccessLogDestination
	format      awsapigateway.AccessLogFormat
}

func (a *accessLogSettings) Destination() awsapigatewayv2.IAccessLogDestination { return a.destination }
func (a *accessLogSettings) Format() awsapigateway.AccessLogFormat              { return a.format }

// tokenIssuer is the identity provider of end users' routes (service.JWT),
// who hold its token instead of AWS credentials: they sit behind a JWT
// authorizer, which checks signature (keys from the issuer's discovery
// document), issuer, audience, exp and nbf before the function is invoked
// and passes the claims in requestContext.authorizer.jwt.claims.
type tokenIssuer struct {
	issuer, audience string
}

// newHTTPAPI fronts fns with an HTTP API (payload v2) serving the routes
// of their contracts (each fns[i] the routes of contracts[i], through its
// own integration; the first names the API), each IAM (SigV4) or JWT
// authorized as the contract says: an
// unauthenticated route would be public on the internet. Routes are listed
// one by one so a reviewer sees the API surface in the template and unknown
// paths are refused by the gateway before they cost an invocation.
func newHTTPAPI(stack awscdk.Stack, contracts []service.Function, cfg config.Stage, fns []awslambda.IFunction, tokens *tokenIssuer) (awsapigatewayv2.HttpApi, error) {
	name := contracts[0].Name
	cors, err := corsPreflight(cfg, contracts[0])
	if err != nil {
		return nil, err
	}
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("Api"), &awsapigatewayv2.HttpApiProps{
		ApiName:            jsii.String(fmt.Sprintf("%s-%s", name, cfg.Name)),
		Description:        jsii.String(fmt.Sprintf("dynastack %s API, stage %s", name, cfg.Name)),
		DefaultAuthorizer:  awsapigatewayv2authorizers.NewHttpIamAuthorizer(),
		CreateDefaultStage: jsii.Bool(false),
		CorsPreflight:      cors,
	})
	accessLogs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     gofunction.LogRetention(cfg.Name),
		RemovalPolicy: gofunction.LogRemovalPolicy(cfg.Name),
	})
	api.AddStage(jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageOptions{
		StageName:  jsii.String(service.APIStage),
		AutoDeploy: jsii.Bool(true),
		// Structured access logs: one JSON object per request, joinable with
		// the function's logs by requestId (the functions' request_id).
		AccessLogSettings: &accessLogSettings{
			destination: awsapigatewayv2.NewLogGroupLogDestination(accessLogs),
			format:      awsapigateway.AccessLogFormat_Custom(jsii.String(accessLogFormat)),
		},
		// A ceiling per stage so a runaway client cannot exhaust the
		// account's Lambda concurrency or the table's on-demand budget.
		Throttle: &awsapigatewayv2.ThrottleSettings{RateLimit: jsii.Number(throttleRate), BurstLimit: jsii.Number(throttleBurst)},
	})
	// The JWT authorizer is made at the first token route, after every IAM
	// route before it, so the template keeps the contract's order.
	var userToken awsapigatewayv2.IHttpRouteAuthorizer
	for i, contract := range contracts {
		// Each function's routes go to its own integration (the first's is
		// "Lambda", as when one function served every API).
		id := "Lambda"
		if i > 0 {
			id = contract.Name + "Lambda"
		}
		integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(id), fns[i], &awsapigatewayv2integrations.HttpLambdaIntegrationProps{
			PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
		})
		for _, r := range contract.Routes {
			if err := r.Validate(); err != nil {
				return nil, err
			}
			var authorizer awsapigatewayv2.IHttpRouteAuthorizer
			if r.Auth == service.JWT {
				if tokens == nil {
					return nil, fmt.Errorf("route %q takes a JWT, and %s has no token issuer: pass the stage's (config.Stage.StakTokensFor)", r.Key(), name)
				}
				if userToken == nil {
					userToken = awsapigatewayv2authorizers.NewHttpJwtAuthorizer(jsii.String("UserToken0"), jsii.String(tokens.issuer), &awsapigatewayv2authorizers.HttpJwtAuthorizerProps{
						JwtAudience:    &[]*string{jsii.String(tokens.audience)},
						IdentitySource: &[]*string{jsii.String("$request.header.Authorization")},
					})
				}
				authorizer = userToken
			}
			api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
				Path:        jsii.String(r.Path),
				Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod(r.Method)},
				Integration: integration,
				Authorizer:  authorizer,
			})
		}
	}
	awscdk.NewCfnOutput(stack, jsii.String("ApiUrl"), &awscdk.CfnOutputProps{
		Value:       api.ApiEndpoint(),
		Description: jsii.String(fmt.Sprintf("Base URL of the %s API (SigV4-signed requests; end-user routes take a bearer token)", name)),
	})
	return api, nil
}

// corsPreflight is the API's CORS configuration from the stage policy
// (config.Stage.CORS, by the name of the service fn belongs to); nil, no
// browser origin, when the stage gives the service none. API Gateway then
// answers preflight requests (OPTIONS) itself, before any authorizer.
func corsPreflight(cfg config.Stage, fn service.Function) (*awsapigatewayv2.CorsPreflightOptions, error) {
	var serviceName string
	for _, c := range catalog.Services() {
		if _, ok := c.Function(fn.Name); ok {
			serviceName = c.Name
		}
	}
	c, ok, err := cfg.CORSFor(serviceName)
	if err != nil || !ok {
		return nil, err
	}
	methods := make([]awsapigatewayv2.CorsHttpMethod, len(c.AllowMethods))
	for i, m := range c.AllowMethods {
		methods[i] = awsapigatewayv2.CorsHttpMethod(m)
	}
	o := &awsapigatewayv2.CorsPreflightOptions{
		AllowOrigins:  jsii.Strings(c.AllowOrigins...),
		AllowMethods:  &methods,
		AllowHeaders:  jsii.Strings(c.AllowHeaders...),
		ExposeHeaders: jsii.Strings(c.ExposeHeaders...),
	}
	if c.MaxAgeSeconds > 0 {
		o.MaxAge = awscdk.Duration_Seconds(jsii.Number(c.MaxAgeSeconds))
	}
	return o, nil
}
