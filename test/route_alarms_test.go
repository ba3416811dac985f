package test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRouteLatencyAlarms: in every stage, each route of each API has
// exactly one alarm on its p99 RouteLatency, raised at 80% of the time a
// request may take (the API function's timeout, or API Gateway's 30 s if
// shorter), and no alarm watches a route the contract lacks.
func TestRouteLatencyAlarms(t *testing.T) {
	for stage, stacks := range asm.Templates {
		for _, c := range catalog.Services() {
			tmpl, ok := stacks[c.Name]
			require.True(t, ok, "%s/%s: template", stage, c.Name)
			for _, fn := range c.Functions {
				if fn.Kind != service.HTTP {
					continue
				}
				timeout := 0.0
				for _, f := range tmpl.Resources("AWS::Lambda::Function") {
					p := props(f)
					env, _ := p["Environment"].(map[string]any)
					vars, _ := env["Variables"].(map[string]any)
					if vars[service.EnvFunction] == fn.Name {
						timeout, _ = p["Timeout"].(float64)
					}
				}
				require.NotZero(t, timeout, "%s/%s: the API function's timeout", stage, fn.Name)
				want := min(timeout, 30) * 1000 * 0.8
				var routes []string
				for aid, a := range tmpl.Resources("AWS::CloudWatch::Alarm") {
					p := props(a)
					if p["MetricName"] != service.MetricRouteLatency {
						continue
					}
					dims := map[string]string{}
					for _, d := range list(p["Dimensions"]) {
						dims[fmt.Sprint(d["Name"])] = fmt.Sprint(d["Value"])
					}
					if dims[service.MetricDimension] != fn.Name {
						continue
					}
					routes = append(routes, dims[service.DimRoute])
					assert.Equal(t, "p99", p["ExtendedStatistic"], "%s/%s %s: statistic", stage, c.Name, aid)
					assert.Equal(t, want, p["Threshold"], "%s/%s %s: threshold", stage, c.Name, aid)
					assert.Len(t, dims, 2, "%s/%s %s: dimensions (service and route, every status class)", stage, c.Name, aid)
				}
				var keys []string
				for _, r := range fn.Routes {
					keys = append(keys, r.Key())
				}
				slices.Sort(routes)
				slices.Sort(keys)
				assert.Equal(t, keys, routes, "%s/%s: one RouteLatency alarm per route", stage, fn.Name)
			}
		}
	}
}
