package stacks

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

func apiWithStage(stack awscdk.Stack, id string) awsapigatewayv2.HttpApi {
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String(id), &awsapigatewayv2.HttpApiProps{CreateDefaultStage: jsii.Bool(false)})
	api.AddStage(jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageOptions{StageName: jsii.String("$default")})
	return api
}

func TestThrottleRoutes(t *testing.T) {
	stack := cdktest.NewStack(t)
	require.NoError(t, throttleRoutes(apiWithStage(stack, "Stak"), stakcontract.API))
	// A service without fan-out routes is left alone.
	require.NoError(t, throttleRoutes(apiWithStage(stack, "Itsm"), itsmcontract.API))
	raw, _ := json.Marshal(cdktest.JSON(t, stack)["Resources"])
	for _, want := range []string{
		`"RouteSettings":{"POST /admin/tenants/{tenant}/inboxes/{inbox}/recount":{"ThrottlingBurstLimit":2,"ThrottlingRateLimit":1}`,
		`"POST /tenants/{tenant}/inboxes/{inbox}/messages":{"ThrottlingBurstLimit":10,"ThrottlingRateLimit":5}`,
	} {
		assert.Contains(t, string(raw), want, "template")
	}
	assert.Equal(t, 1, strings.Count(string(raw), `"RouteSettings"`), "stages with route settings, want Stak's only")

	// A throttled route the API no longer serves, or a ceiling above the
	// stage's, is an error naming it.
	renamed := stakcontract.API
	renamed.Routes = []service.Route{stakcontract.GetTenant}
	assert.ErrorContains(t, throttleRoutes(apiWithStage(stack, "Renamed"), renamed),
		`route throttle for "POST /admin/tenants/{tenant}/inboxes/{inbox}/recount", which the API does not serve`, "renamed route")
	routeThrottles["test"] = map[string]throttle{"GET /x": {rate: 500, burst: 1000}}
	defer delete(routeThrottles, "test")
	assert.ErrorContains(t, throttleRoutes(apiWithStage(stack, "TooHigh"), service.Function{Name: "test", Routes: []service.Route{{Method: "GET", Path: "/x"}}}),
		`route "GET /x" throttle 500/s burst 1000: use a rate of 1 to 100 and a burst of rate to 200`, "ceiling above the stage")
}
