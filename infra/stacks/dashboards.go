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
	"github.com/dynastack/dynastack/constructs/catalog"
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
		return panel{title: title, left: left}
	}
	opts := func(stat, label string) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Period: alarmPeriod(), Statistic: jsii.String(stat), Label: jsii.String(label)}
	}
	apiFns := c.HTTPFunctions()
	for _, api := range f.apis {
		answers := []awscloudwatch.IMetric{api.MetricClientError(opts("Sum", "4xx")), api.MetricServerError(opts("Sum", "5xx"))}
		for _, fn := range apiFns {
			answers = append(answers, businessMetric(fn, service.Unavailable, "Sum", nil))
		}
		rows = append(rows, sized([]panel{
			graph("API requests", api.MetricCount(opts("Sum", "requests"))),
			graph("API 4xx / 5xx / 503", answers...),
			graph("API latency p50 / p99", api.MetricLatency(opts("p50", "p50")), api.MetricLatency(opts("p99", "p99"))),
		}))
	}
	if len(f.apis) > 0 {
		for _, fn := range apiFns {
			rows = append(rows, routeRows(fn, nil)...)
		}
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

// routesPerRow is how many route graphs share a row.
const routesPerRow = 4

// routeRows are the per-route graphs of the HTTP function fn, routesPerRow
// a row: each route's requests and its 4xx, 5xx and 503 answers (left),
// its p50 and p99 answer time in ms (right), all from its
// service.RouteLatency. env places the metrics in another account or
// Region (the overview's), nil in the stack's own.
func routeRows(fn service.Function, env *metricEnv) [][]awscloudwatch.IWidget {
	m := service.RouteLatency(fn)
	var ps []panel
	for _, r := range fn.Routes {
		route := func(stat, label string, status string) awscloudwatch.IMetric {
			dims := map[string]string{service.DimRoute: r.Key()}
			if status != "" {
				dims[service.DimStatus] = status
			}
			return env.with(businessMetric(fn, m, stat, dims), label)
		}
		ps = append(ps, panel{title: r.Key(),
			left: []awscloudwatch.IMetric{route("SampleCount", "requests", ""), route("SampleCount", "4xx", service.StatusClientError),
				route("SampleCount", "5xx", service.StatusServerError), route("SampleCount", "503", service.StatusUnavailable)},
			right: []awscloudwatch.IMetric{route("p50", "p50 ms", ""), route("p99", "p99 ms", "")}})
	}
	var rows [][]awscloudwatch.IWidget
	for len(ps) > 0 {
		n := min(len(ps), routesPerRow)
		rows = append(rows, sized(ps[:n]))
		ps = ps[n:]
	}
	return rows
}

// metricEnv is where a service's metrics live when its stack is placed
// apart from the dashboard's (config.Stage.Services): a dashboard graphs
// another account's metrics through CloudWatch cross-account
// observability, another Region's directly.
type metricEnv struct {
	account, region string
}

// with is m labelled label, in e's account and Region (m's own when e is
// nil or empty).
func (e *metricEnv) with(m awscloudwatch.Metric, label string) awscloudwatch.IMetric {
	o := &awscloudwatch.MetricOptions{Label: jsii.String(label)}
	if e != nil && e.account != "" {
		o.Account = jsii.String(e.account)
	}
	if e != nil && e.region != "" {
		o.Region = jsii.String(e.region)
	}
	return m.With(o)
}

// overviewHost is the service whose stack holds the stage's overview
// dashboard: the catalog's first. Every stack holds what it uses and
// refers to no other (NewStage), and the overview reads only the metrics
// the contracts name, so it needs no other stack's resources.
func overviewHost() string { return catalog.Services()[0].Name }

// addOverview is the stage's overview dashboard, dynastack-<stage>, in
// the host's stack: one row per service, in catalog order, with its health
// from what its functions emit — the API's requests and 4xx, 5xx and 503
// answers over every route, its p50 and p99 answer time, and the totals of
// its business metrics. The service's own dashboard has the detail.
func addOverview(stack awscdk.Stack, cfg config.Stage) awscloudwatch.Dashboard {
	host := cfg.PlacementOf(overviewHost())
	var rows [][]awscloudwatch.IWidget
	for _, c := range catalog.Services() {
		var env *metricEnv
		if p := cfg.PlacementOf(c.Name); p != host {
			env = &metricEnv{account: p.Account, region: p.Region}
		}
		var health []panel
		// One pair of panels per service: an API of several functions
		// (AgenticPM's) has each function's lines, labelled by its name.
		var answers, times []awscloudwatch.IMetric
		fns := c.HTTPFunctions()
		for _, fn := range fns {
			m := service.RouteLatency(fn)
			all := func(stat, label, status string) awscloudwatch.IMetric {
				var dims map[string]string
				if status != "" {
					dims = map[string]string{service.DimStatus: status}
				}
				if len(fns) > 1 {
					label = fn.Name + " " + label
				}
				return env.with(businessMetric(fn, m, stat, dims), label)
			}
			answers = append(answers, all("SampleCount", "requests", ""),
				all("SampleCount", "4xx", service.StatusClientError), all("SampleCount", "5xx", service.StatusServerError), all("SampleCount", "503", service.StatusUnavailable))
			times = append(times, all("p50", "p50", ""), all("p99", "p99", ""))
		}
		if len(fns) > 0 {
			health = append(health,
				panel{title: c.Name + ": requests, 4xx / 5xx / 503", left: answers},
				panel{title: c.Name + ": answer time p50 / p99 (ms)", left: times})
		}
		var business []awscloudwatch.IMetric
		for _, fn := range c.Functions {
			for _, m := range fn.Metrics {
				business = append(business, env.with(businessMetric(fn, m, "Sum", nil), m.Name))
			}
		}
		if len(business) > 0 {
			health = append(health, panel{title: c.Name + ": business metrics", left: business})
		}
		rows = append(rows, sized(health))
	}
	widgets := make([]*[]awscloudwatch.IWidget, len(rows))
	for i := range rows {
		widgets[i] = &rows[i]
	}
	return awscloudwatch.NewDashboard(stack, jsii.String("Overview"), &awscloudwatch.DashboardProps{
		DashboardName:   jsii.String(fmt.Sprintf("dynastack-%s", cfg.Name)),
		Widgets:         &widgets,
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
	})
}

// panel is one graph of a row: metrics on the left axis, and on the
// right (another unit).
type panel struct {
	title       string
	left, right []awscloudwatch.IMetric
}

// sized makes a row's graphs, of equal widths across the grid.
func sized(ps []panel) []awscloudwatch.IWidget {
	w := float64(dashboardWidth / len(ps))
	ws := make([]awscloudwatch.IWidget, len(ps))
	for i, p := range ps {
		props := &awscloudwatch.GraphWidgetProps{
			Title: jsii.String(p.title), Left: &p.left, Width: jsii.Number(w), Height: jsii.Number(widgetHeight), Period: alarmPeriod(),
		}
		if len(p.right) > 0 {
			props.Right = &p.right
		}
		ws[i] = awscloudwatch.NewGraphWidget(props)
	}
	return ws
}
