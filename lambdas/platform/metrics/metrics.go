// Package metrics writes a function's metrics in CloudWatch's embedded
// metric format (EMF): one JSON log line per measurement, whose "_aws"
// member tells CloudWatch Logs which top-level members are metric values
// and which are dimensions. The function's log group turns the line into
// metrics: no API call, no agent, nothing at init.
//
// What a metric is called, its unit and its bounded dimensions are facts
// of the service's contract (service.Metric, listed in the emitting
// service.Function's Metrics); Emit refuses a dimension value the
// contract does not list, so no user, tenant or id becomes a dimension.
// The MetricDimension dimension ("service") is the logger's own attribute,
// the function's name, which fn.Main gives every function's logger.
//
// Parse reads such a line back and checks it against the EMF
// specification: the tests of every service, and the local runner's alarm
// evaluation, read lines through it.
//
// The package keeps a registry of what this process emitted (Emitted):
// the services' tests hold it to their contracts.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dynastack/dynastack/constructs/service"
)

// MessageRefused is the message of the ERROR line Emit writes instead of
// a measurement it refuses (a value outside a dimension's list, a wrong
// number of values): a bug to fix, never a silent new metric.
const MessageRefused = "metric refused"

// Emit writes one measurement of m with value v on log, with the values
// of m's dimensions in their declared order. A value outside a
// dimension's list counts as service.OtherValue when the dimension lists
// that, else the measurement is refused (MessageRefused).
func Emit(ctx context.Context, log *slog.Logger, m service.Metric, v float64, values ...string) {
	values = slices.Clone(values)
	attrs, err := attrs(m, v, values, time.Now())
	if err != nil {
		log.ErrorContext(ctx, MessageRefused, "metric", m.Name, "error", err.Error())
		return
	}
	record(m.Name, values, m)
	log.LogAttrs(ctx, slog.LevelInfo, "metric "+m.Name, attrs...)
}

// Count emits 1 of m: one event.
func Count(ctx context.Context, log *slog.Logger, m service.Metric, values ...string) {
	Emit(ctx, log, m, 1, values...)
}

// attrs are the members of m's line: _aws, each dimension's value, and
// the metric's value.
func attrs(m service.Metric, v float64, values []string, now time.Time) ([]slog.Attr, error) {
	if len(values) != len(m.Dimensions) {
		return nil, fmt.Errorf("%d dimension values for %d dimensions", len(values), len(m.Dimensions))
	}
	out := make([]slog.Attr, 0, len(values)+2)
	sets := m.DimensionSets()
	out = append(out, slog.Any("_aws", directive{
		Timestamp: now.UnixMilli(),
		CloudWatchMetrics: []metricDirective{{
			Namespace:  service.MetricNamespace,
			Dimensions: sets,
			Metrics:    []metricDefinition{{Name: m.Name, Unit: string(m.Unit)}},
		}},
	}))
	for i, d := range m.Dimensions {
		val := values[i]
		if !slices.Contains(d.Values, val) {
			if !slices.Contains(d.Values, service.OtherValue) {
				return nil, fmt.Errorf("dimension %q: value %q is not one of %s", d.Name, val, strings.Join(d.Values, ", "))
			}
			values[i] = service.OtherValue
			val = service.OtherValue
		}
		out = append(out, slog.String(d.Name, val))
	}
	return append(out, slog.Float64(m.Name, v)), nil
}

// The EMF root's "_aws" member (the specification's Metadata object).
type directive struct {
	Timestamp         int64             `json:"Timestamp"`
	CloudWatchMetrics []metricDirective `json:"CloudWatchMetrics"`
}

type metricDirective struct {
	Namespace  string             `json:"Namespace"`
	Dimensions [][]string         `json:"Dimensions"`
	Metrics    []metricDefinition `json:"Metrics"`
}

type metricDefinition struct {
	Name string `json:"Name"`
	Unit string `json:"Unit,omitempty"`
}

// Emission is one metric and dimension values this process emitted.
type Emission struct {
	Metric string
	// Values are the dimension values, in the metric's declared order.
	Values []string
}

var registry struct {
	sync.Mutex
	seen map[string]Emission
}

func record(name string, values []string, m service.Metric) {
	key := name + "\x00" + strings.Join(values, "\x00")
	registry.Lock()
	defer registry.Unlock()
	if _, ok := registry.seen[key]; ok {
		return
	}
	if registry.seen == nil {
		registry.seen = map[string]Emission{}
	}
	registry.seen[key] = Emission{Metric: m.Name, Values: slices.Clone(values)}
}

// Emitted lists what this process emitted, each metric and value
// combination once, sorted.
func Emitted() []Emission {
	registry.Lock()
	defer registry.Unlock()
	out := make([]Emission, 0, len(registry.seen))
	for _, e := range registry.seen {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Emission) int {
		return strings.Compare(a.Metric+"\x00"+strings.Join(a.Values, "\x00"), b.Metric+"\x00"+strings.Join(b.Values, "\x00"))
	})
	return out
}
