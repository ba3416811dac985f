package service_test

import (
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/stretchr/testify/assert"
)

func TestMetricDimensionSets(t *testing.T) {
	m := service.Metric{Name: "M", Unit: service.Count, Dimensions: []service.Dimension{{Name: "a", Values: []string{"x"}}, {Name: "b", Values: []string{"y"}}}}
	assert.Equal(t, [][]string{{"service"}, {"service", "a"}, {"service", "b"}, {"service", "a", "b"}}, m.DimensionSets())
	assert.Equal(t, [][]string{{"service"}}, service.Metric{Name: "M"}.DimensionSets(), "no dimension: the function's")
}

func TestMetricValidate(t *testing.T) {
	ok := service.Metric{Name: "Deliveries", Unit: service.Count, Dimensions: []service.Dimension{{Name: "outcome", Values: []string{"delivered", "failed"}}}}
	assert.NoError(t, ok.Validate())
	tests := []struct {
		name string
		edit func(*service.Metric)
		want string
	}{
		{"empty name", func(m *service.Metric) { m.Name = "" }, "metric name"},
		{"long name", func(m *service.Metric) { m.Name = strings.Repeat("a", 256) }, "metric name"},
		{"non-ascii name", func(m *service.Metric) { m.Name = "Zustellungenä" }, "printable ASCII"},
		{"reserved name", func(m *service.Metric) { m.Name = "msg" }, "member every log line has"},
		{"unit", func(m *service.Metric) { m.Unit = "Apples" }, "not a CloudWatch unit"},
		{"unbounded", func(m *service.Metric) { m.Dimensions[0].Values = nil }, "bounded"},
		{"colon", func(m *service.Metric) { m.Dimensions[0].Name = ":x" }, "colon"},
		{"twice", func(m *service.Metric) { m.Dimensions = append(m.Dimensions, m.Dimensions[0]) }, "named twice"},
		{"service", func(m *service.Metric) { m.Dimensions[0].Name = service.MetricDimension }, "named twice"},
		{"value", func(m *service.Metric) { m.Dimensions[0].Values = []string{" "} }, "dimension value"},
		{"too many", func(m *service.Metric) {
			m.Dimensions = []service.Dimension{{Name: "a", Values: []string{"x"}}, {Name: "b", Values: []string{"x"}}, {Name: "c", Values: []string{"x"}}}
		}, "at most 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ok
			m.Dimensions = append([]service.Dimension{{Name: ok.Dimensions[0].Name, Values: append([]string(nil), ok.Dimensions[0].Values...)}}, ok.Dimensions[1:]...)
			tt.edit(&m)
			assert.ErrorContains(t, m.Validate(), tt.want)
		})
	}
	assert.NoError(t, service.CheckNamespace(service.MetricNamespace))
	assert.Error(t, service.CheckNamespace("AWS/Lambda"))
}
