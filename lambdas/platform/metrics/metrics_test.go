package metrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/platform/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var deliveries = service.Metric{Name: "Deliveries", Unit: service.Count, Dimensions: []service.Dimension{
	{Name: "type", Values: []string{"hello", service.OtherValue}},
	{Name: "outcome", Values: []string{"delivered", "failed"}},
}}

// logger is a function's logger as fn.Main makes it: JSON, with its name
// as the service attribute.
func logger(buf *bytes.Buffer) *slog.Logger {
	return logx.New(buf, slog.LevelInfo).With(service.MetricDimension, "rezagent-processor")
}

func TestEmitWritesAnEMFLine(t *testing.T) {
	var buf bytes.Buffer
	metrics.Emit(context.Background(), logger(&buf), deliveries, 3, "hello", "failed")
	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line), "one JSON line")
	aws, ok := line["_aws"].(map[string]any)
	require.True(t, ok, "_aws object")
	assert.IsType(t, float64(0), aws["Timestamp"], "Timestamp is a number")
	assert.Equal(t, []any{map[string]any{
		"Namespace":  "dynastack",
		"Dimensions": []any{[]any{"service"}, []any{"service", "type"}, []any{"service", "outcome"}, []any{"service", "type", "outcome"}},
		"Metrics":    []any{map[string]any{"Name": "Deliveries", "Unit": "Count"}},
	}}, aws["CloudWatchMetrics"], "directive")
	assert.Equal(t, "hello", line["type"], "dimension value at the top level")
	assert.Equal(t, "failed", line["outcome"], "dimension value at the top level")
	assert.Equal(t, 3.0, line["Deliveries"], "metric value at the top level")

	ms, err := metrics.Parse(buf.Bytes())
	require.NoError(t, err, "the line keeps the specification")
	require.Len(t, ms, 4, "one measurement per dimension set")
	assert.Equal(t, map[string]string{"service": "rezagent-processor", "type": "hello", "outcome": "failed"}, ms[3].Dimensions)
	assert.Equal(t, []float64{3}, ms[3].Values)
	assert.Contains(t, metrics.Emitted(), metrics.Emission{Metric: "Deliveries", Values: []string{"hello", "failed"}}, "registry")
}

func TestEmitBoundsDimensions(t *testing.T) {
	var buf bytes.Buffer
	metrics.Count(context.Background(), logger(&buf), deliveries, "user-1234", "delivered")
	ms, err := metrics.Parse(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, "other", ms[len(ms)-1].Dimensions["type"], "a value outside the list counts as other")

	buf.Reset()
	metrics.Count(context.Background(), logger(&buf), deliveries, "hello", "tenant-42")
	_, err = metrics.Parse(buf.Bytes())
	assert.ErrorIs(t, err, metrics.ErrNotEMF, "a value outside a list without other is refused")
	assert.Contains(t, buf.String(), metrics.MessageRefused)
	assert.Contains(t, buf.String(), `"level":"ERROR"`)

	buf.Reset()
	metrics.Count(context.Background(), logger(&buf), deliveries, "hello")
	assert.Contains(t, buf.String(), metrics.MessageRefused, "too few values")
	assert.NotContains(t, metrics.Emitted(), metrics.Emission{Metric: "Deliveries", Values: []string{"hello", "tenant-42"}}, "a refused value is not registered")
}

func TestParseRefusesWhatTheSpecificationForbids(t *testing.T) {
	valid := `{"_aws":{"Timestamp":1700000000000,"CloudWatchMetrics":[{"Namespace":"dynastack","Dimensions":[["service"]],"Metrics":[{"Name":"M","Unit":"Count"}]}]},"service":"f","M":1}`
	_, err := metrics.Parse([]byte(valid))
	require.NoError(t, err, "the valid line")

	many := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	dims31 := many(31, func(i int) string { return fmt.Sprintf(`"d%d"`, i) })
	members31 := many(31, func(i int) string { return fmt.Sprintf(`"d%d":"v"`, i) })
	metrics101 := many(101, func(i int) string { return fmt.Sprintf(`{"Name":"m%d"}`, i) })
	values101 := many(101, func(i int) string { return fmt.Sprintf(`"m%d":1`, i) })
	tests := []struct{ name, line, want string }{
		{"not json", `not json`, "one JSON object"},
		{"no timestamp", `{"_aws":{"CloudWatchMetrics":[]}}`, "Timestamp is required"},
		{"timestamp a string", `{"_aws":{"Timestamp":"now","CloudWatchMetrics":[]}}`, "_aws"},
		{"no directives", `{"_aws":{"Timestamp":1}}`, "CloudWatchMetrics is required"},
		{"no namespace", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Dimensions":[],"Metrics":[]}]}}`, "Namespace is required"},
		{"bad namespace", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"a$b","Dimensions":[],"Metrics":[]}]}}`, "namespace"},
		{"AWS namespace", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"AWS/Lambda","Dimensions":[],"Metrics":[]}]}}`, "reserved"},
		{"no dimensions", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Metrics":[]}]}}`, "Dimensions is required"},
		{"31 dimensions", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[[` + dims31 + `]],"Metrics":[]}]},` + members31 + `}`, "at most 30"},
		{"dimension missing", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["service"]],"Metrics":[{"Name":"M"}]}]},"M":1}`, "must be a string"},
		{"dimension a number", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["service"]],"Metrics":[{"Name":"M"}]}]},"service":5,"M":1}`, "must be a string"},
		{"dimension name colon", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[[":a"]],"Metrics":[]}]},":a":"v"}`, "colon"},
		{"no metrics", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[]}]}}`, "Metrics is required"},
		{"101 metrics", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[` + metrics101 + `]}]},` + values101 + `}`, "at most 100"},
		{"bad unit", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"M","Unit":"Apples"}]}]},"M":1}`, "not a CloudWatch unit"},
		{"bad resolution", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"M","StorageResolution":5}]}]},"M":1}`, "StorageResolution"},
		{"value missing", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"M"}]}]}}`, "no member"},
		{"value a string", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":"1"}`, "number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := metrics.Parse([]byte(tt.line))
			assert.ErrorContains(t, err, tt.want)
		})
	}
	_, err = metrics.Parse([]byte(`{"level":"INFO","msg":"request"}`))
	assert.ErrorIs(t, err, metrics.ErrNotEMF, "an ordinary log line")
	ms, err := metrics.Parse([]byte(`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":[1,2]}`))
	require.NoError(t, err, "no dimensions and an array of values are allowed")
	assert.Equal(t, []metrics.Measurement{{Namespace: "n", Name: "M", Unit: "None", Dimensions: map[string]string{}, Values: []float64{1, 2}, Timestamp: 1}}, ms)
}
