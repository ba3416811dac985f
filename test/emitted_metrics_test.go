package test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/stretchr/testify/assert"
)

// TestAlarmsWatchEmittedMetrics: every alarm of every stage on a metric
// outside AWS's namespaces watches one some function emits, with that
// namespace, name, dimension set and dimension values: an alarm on a
// metric nobody emits is green forever. What is emitted is the contracts'
// facts (service.Function.AllMetrics: each metric's dimension sets and
// listed values), which the platform writes (platform/metrics) and each
// service's tests prove emitted (servicetest.Main fails a package whose
// tests emitted none of a declared metric).
func TestAlarmsWatchEmittedMetrics(t *testing.T) {
	custom := 0
	for stage, stacks := range asm.Templates {
		for id, tmpl := range stacks {
			for aid, a := range tmpl.Resources("AWS::CloudWatch::Alarm") {
				p := props(a)
				watched := []map[string]any{p}
				for _, m := range list(p["Metrics"]) {
					if stat, ok := m["MetricStat"].(map[string]any); ok {
						watched = append(watched, stat["Metric"].(map[string]any))
					}
				}
				for _, m := range watched {
					ns, _ := m["Namespace"].(string)
					if ns == "" || len(ns) > 4 && ns[:4] == "AWS/" {
						continue
					}
					custom++
					dims := map[string]string{}
					for _, d := range list(m["Dimensions"]) {
						v, ok := d["Value"].(string)
						assert.True(t, ok, "%s/%s %s: dimension %v: a custom metric's dimension values are literals", stage, id, aid, d)
						dims[fmt.Sprint(d["Name"])] = v
					}
					assert.NoError(t, emitted(ns, fmt.Sprint(m["MetricName"]), dims), "%s/%s %s", stage, id, aid)
				}
			}
		}
	}
	// Unavailable on every API, FailedForGood, FailedResourceActions,
	// OverdueHeldActions and CounterDrift, and RouteLatency on every
	// route, in three stages.
	routes := 0
	for _, c := range catalog.Services() {
		for _, f := range c.Functions {
			routes += len(f.Routes)
		}
	}
	assert.GreaterOrEqual(t, custom, 3*(5+4+routes), "alarms on emitted metrics")
}

// emitted says why no function emits metric name in namespace ns with
// exactly dims, or nil if one does.
func emitted(ns, name string, dims map[string]string) error {
	if ns != service.MetricNamespace {
		return fmt.Errorf("namespace %q: the functions emit %q only", ns, service.MetricNamespace)
	}
	f, ok := catalog.Function(dims[service.MetricDimension])
	if !ok {
		return fmt.Errorf("metric %s: dimension %s=%q names no function", name, service.MetricDimension, dims[service.MetricDimension])
	}
	i := slices.IndexFunc(f.AllMetrics(), func(m service.Metric) bool { return m.Name == name })
	if i < 0 {
		return fmt.Errorf("function %s emits no metric %q", f.Name, name)
	}
	m := f.AllMetrics()[i]
	names := make([]string, 0, len(dims))
	for k := range dims {
		names = append(names, k)
	}
	slices.Sort(names)
	if !slices.ContainsFunc(m.DimensionSets(), func(set []string) bool {
		set = slices.Clone(set)
		slices.Sort(set)
		return slices.Equal(set, names)
	}) {
		return fmt.Errorf("metric %s of %s: dimensions %v are not one of its sets %v", name, f.Name, names, m.DimensionSets())
	}
	for k, v := range dims {
		if k == service.MetricDimension {
			continue
		}
		d, _ := m.Dimension(k)
		if !slices.Contains(d.Values, v) {
			return fmt.Errorf("metric %s of %s: dimension %s=%q is not one of %v", name, f.Name, k, v, d.Values)
		}
	}
	return nil
}

// The check refuses each way an alarm can miss what is emitted.
func TestEmittedRefuses(t *testing.T) {
	ok := map[string]string{service.MetricDimension: "rezagent-processor", "outcome": "failed_for_good"}
	assert.NoError(t, emitted(service.MetricNamespace, "Deliveries", ok))
	for _, tc := range []struct {
		name, ns, metric string
		dims             map[string]string
	}{
		{"namespace", "dynastack2", "Deliveries", ok},
		{"metric name", service.MetricNamespace, "Delivery", ok},
		{"function", service.MetricNamespace, "Deliveries", map[string]string{service.MetricDimension: "rezagent"}},
		{"no service dimension", service.MetricNamespace, "Deliveries", map[string]string{"outcome": "failed_for_good"}},
		{"dimension set", service.MetricNamespace, "Deliveries", map[string]string{service.MetricDimension: "rezagent-processor", "stage": "dev"}},
		{"value", service.MetricNamespace, "Deliveries", map[string]string{service.MetricDimension: "rezagent-processor", "outcome": "failed"}},
	} {
		assert.Error(t, emitted(tc.ns, tc.metric, tc.dims), tc.name)
	}
}
