package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/infra/config"
)

// Dashboard layout: CloudWatch's grid is 24 units wide.
const (
	dashboardWidth = 24
	widgetHeight   = 6
)

// found is what a stack holds that its dashboard shows, from the one walk
// of the tree wireAlarms makes.
type found struct {
	functions []awslambda.Function
	apis      []awsapigatewayv2.HttpApi
	tables    []awsdynamodb.TableV2
	queues    []awssqs.Queue
}

// addDashboard is the service's dashboard in its stack (<service>-<stage>):
// a row per concern — the API (requests, 4xx, 5xx and 503 unavailable,
// p50 and p99 latency), the functions (errors, throttles, p99 duration,
// concurrency), the tables (consumed capacity, throttle events), the
// queues (oldest message, depth; dead-letter queues among them) and the
// business metrics the contract declares (service.Function.Metrics), each
// split by its first dimension.
func addDashboard(stack awscdk.Stack, cfg config.Stage, c service.Contract, f found) awscloudwatch.Dashboard {
	var rows [][]awscloudwatch.IWidget
	graph := func(title string, left ...awscloudwatch.IMetric) panel {
		return panel{title, left}
	}
	opts := func(stat, label string) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Period: alarmPeriod(), Statistic: jsii.String(stat), Label: jsii.String(label)}
	}
	var apiFn service.Function
	for _, fn := range c.Functions {
		if fn.Kind == service.HTTP {
			apiFn = fn
		}
	}
	for _, api := range f.apis {
		rows = append(rows, sized([]panel{
			graph("API requests", api.MetricCount(opts("Sum", "requests"))),
			graph("API 4xx / 5xx / 503", api.MetricClientError(opts("Sum", "4xx")), api.MetricServerError(opts("Sum", "5xx")),
				businessMetric(apiFn, service.Unavailable, "Sum", nil)),
			graph("API latency p50 / p99", api.MetricLatency(opts("p50", "p50")), api.MetricLatency(opts("p99", "p99"))),
		}))
	}
	var errs, throttles, durations, concurrency []awscloudwatch.IMetric
	for _, fn := range f.functions {
		id := *fn.Node().Id()
		errs = append(errs, fn.MetricErrors(opts("Sum", id)))
		throttles = append(throttles, fn.MetricThrottles(opts("Sum", id)))
		durations = append(durations, fn.MetricDuration(opts("p99", id)))
		concurrency = append(concurrency, fn.Metric(jsii.String("ConcurrentExecutions"), opts("Maximum", id)))
	}
	if len(f.functions) > 0 {
		rows = append(rows, sized([]panel{
			graph("Function errors", errs...), graph("Function throttles", throttles...),
			graph("Function duration p99 (ms)", durations...), graph("Function concurrency", concurrency...),
		}))
	}
	for _, t := range f.tables {
		id := *t.Node().Id()
		ddb := func(name, stat string) awscloudwatch.IMetric {
			return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
				Namespace: jsii.String("AWS/DynamoDB"), MetricName: jsii.String(name),
				DimensionsMap: &map[string]*string{"TableName": t.TableName()}, Period: alarmPeriod(), Statistic: jsii.String(stat), Label: jsii.String(name),
			})
		}
		rows = append(rows, sized([]panel{
			graph(id+" consumed capacity", ddb("ConsumedReadCapacityUnits", "Sum"), ddb("ConsumedWriteCapacityUnits", "Sum")),
			graph(id+" throttle events", ddb("ReadThrottleEvents", "Sum"), ddb("WriteThrottleEvents", "Sum")),
		}))
	}
	var ages, depths []awscloudwatch.IMetric
	for _, q := range f.queues {
		id := *q.Node().Id()
		ages = append(ages, q.MetricApproximateAgeOfOldestMessage(opts("Maximum", id)))
		depths = append(depths, q.MetricApproximateNumberOfMessagesVisible(opts("Maximum", id)))
	}
	if len(f.queues) > 0 {
		rows = append(rows, sized([]panel{
			graph("Queues: oldest message (s)", ages...), graph("Queues and dead-letter queues: depth", depths...),
		}))
	}
	var business []panel
	for _, fn := range c.Functions {
		for _, m := range fn.Metrics {
			var ms []awscloudwatch.IMetric
			if len(m.Dimensions) == 0 {
				ms = append(ms, businessMetric(fn, m, "Sum", nil))
			} else {
				d := m.Dimensions[0]
				for _, v := range d.Values {
					ms = append(ms, businessMetric(fn, m, "Sum", map[string]string{d.Name: v}))
				}
			}
			business = append(business, graph(fmt.Sprintf("%s (%s)", m.Name, fn.Name), ms...))
		}
	}
	for len(business) > 0 {
		n := min(len(business), 4)
		rows = append(rows, sized(business[:n]))
		business = business[n:]
	}
	widgets := make([]*[]awscloudwatch.IWidget, len(rows))
	for i := range rows {
		widgets[i] = &rows[i]
	}
	return awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName:   jsii.String(fmt.Sprintf("%s-%s", c.Name, cfg.Name)),
		Widgets:         &widgets,
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
	})
}

// panel is one graph of a row.
type panel struct {
	title string
	left  []awscloudwatch.IMetric
}

// sized makes a row's graphs, of equal widths across the grid.
func sized(ps []panel) []awscloudwatch.IWidget {
	w := float64(dashboardWidth / len(ps))
	ws := make([]awscloudwatch.IWidget, len(ps))
	for i, p := range ps {
		ws[i] = awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
			Title: jsii.String(p.title), Left: &p.left, Width: jsii.Number(w), Height: jsii.Number(widgetHeight), Period: alarmPeriod(),
		})
	}
	return ws
}
