package stacks

import (
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/jsii-runtime-go"
	rezagentcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
)

// throttle is a route's own ceiling, requests per second, below the API's
// stage-wide throttleRate/throttleBurst.
type throttle struct{ rate, burst float64 }

// routeThrottles bound the routes whose one request fans out into many
// DynamoDB writes or reads, so a caller looping on them cannot spend the
// table's whole on-demand cap (table.DefaultPolicy) or the function's
// reserved concurrency:
//
//   - Stak publish: up to stak.MaxPublishWriteUnits (1000) write units per
//     request; 5/s stays at the prod table's cap of 5000 write units.
//   - Stak mark all read: up to 100 transactional marks per call.
//   - Stak recount: reads every message of a partition; operators only.
//   - rez_agent metrics: one COUNT query per status over every page.
//
// Keyed by function, then by route key ("POST /metrics").
var routeThrottles = map[string]map[string]throttle{
	stakcontract.API.Name: {
		stakcontract.Publish.Key(): {rate: 5, burst: 10},
		stakcontract.ReadAll.Key(): {rate: 5, burst: 10},
		stakcontract.Recount.Key(): {rate: 1, burst: 2},
	},
	rezagentcontract.API.Name: {
		rezagentcontract.Metrics.Key(): {rate: 2, burst: 5},
	},
}

// throttleRoutes sets the route settings of fn's API stage. A throttled
// route the API does not serve is an error: a route dropped from the
// contract would silently lose its ceiling.
func throttleRoutes(api awsapigatewayv2.HttpApi, fn service.Function) error {
	limits := routeThrottles[fn.Name]
	if len(limits) == 0 {
		return nil
	}
	routes := make([]string, len(fn.Routes))
	for i, r := range fn.Routes {
		routes[i] = r.Key()
	}
	name := fn.Name
	stage, ok := api.Node().TryFindChild(jsii.String("DefaultStage")).(awsapigatewayv2.HttpStage)
	if !ok {
		return fmt.Errorf("%s API: no DefaultStage to throttle routes on", name)
	}
	cfn, ok := stage.Node().DefaultChild().(awsapigatewayv2.CfnStage)
	if !ok {
		return fmt.Errorf("%s API: DefaultStage has no CfnStage", name)
	}
	for _, r := range slices.Sorted(maps.Keys(limits)) {
		l := limits[r]
		if !slices.Contains(routes, r) {
			return fmt.Errorf("%s API: route throttle for %q, which the API does not serve: rename it in routeThrottles", name, r)
		}
		if l.rate <= 0 || l.rate > throttleRate || l.burst < l.rate || l.burst > throttleBurst {
			return fmt.Errorf("%s API: route %q throttle %v/s burst %v: use a rate of 1 to %d and a burst of rate to %d", name, r, l.rate, l.burst, throttleRate, throttleBurst)
		}
		cfn.AddPropertyOverride(jsii.String(fmt.Sprintf("RouteSettings.%s.ThrottlingRateLimit", r)), l.rate)
		cfn.AddPropertyOverride(jsii.String(fmt.Sprintf("RouteSettings.%s.ThrottlingBurstLimit", r)), l.burst)
	}
	return nil
}
