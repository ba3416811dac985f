package service

import (
	"fmt"
	"slices"
	"strings"
)

// Metrics a function emits in CloudWatch's embedded metric format (EMF):
// one JSON log line per measurement, which the function's log group turns
// into a metric, with no API call and no agent (lambdas/platform/metrics
// writes the line). What a metric is called, its unit and the dimensions
// it carries are facts both sides read: the function that emits it and
// the stack whose alarms and dashboards watch it. A contract declares each
// of its metrics once and lists it in the emitting Function's Metrics.
//
// Every metric lives in MetricNamespace and carries MetricDimension (the
// emitting function's Name, which the function's logger writes as its
// "service" attribute) in each of its dimension sets. Further dimensions
// are bounded: each Dimension lists every value it may take, so a user,
// tenant or id can never become a dimension (each value is a metric of
// its own, billed by the month).

// Unit is a CloudWatch unit (the EMF specification's MetricDefinition
// Unit: the values of PutMetricData's StandardUnit).
type Unit string

// The units dynastack's metrics use; Units lists every unit CloudWatch
// accepts.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	Seconds      Unit = "Seconds"
	NoUnit       Unit = "None"
)

// Units are the units CloudWatch accepts (StandardUnit).
var Units = []Unit{
	"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
	"Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count",
	"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
	"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None",
}

// Limits of the EMF specification and of CloudWatch's metric identity.
const (
	// MaxDimensionsPerSet: a DimensionSet holds at most 30 dimension keys.
	MaxDimensionsPerSet = 30
	// MaxMetricsPerDirective: a MetricDirective defines at most 100 metrics.
	MaxMetricsPerDirective = 100
	// MaxNamespaceLen, MaxDimensionNameLen, MaxDimensionValueLen and
	// MaxMetricNameLen are CloudWatch's lengths (1 at least each).
	MaxNamespaceLen      = 255
	MaxDimensionNameLen  = 255
	MaxDimensionValueLen = 1024
	MaxMetricNameLen     = 255
	// MaxMetricDimensions is dynastack's own bound on a metric's bounded
	// dimensions (MetricDimension aside): DimensionSets emits every
	// subset, 2^n sets, and each value combination is a metric.
	MaxMetricDimensions = 2
)

// OtherValue is the value a bounded dimension takes for anything outside
// its list (an unknown message type): list it among a dimension's Values
// to accept such values, counted together.
const OtherValue = "other"

// Dimension is a bounded dimension of a metric.
type Dimension struct {
	// Name is the dimension's name (a top-level member of the log line).
	Name string
	// Values are every value the dimension takes.
	Values []string
}

// Metric is one metric a function emits.
type Metric struct {
	// Name is the metric's name in MetricNamespace.
	Name string
	// Unit is its CloudWatch unit.
	Unit Unit
	// Description says what one measurement is, for people reading the
	// dashboards and the doc page.
	Description string
	// Dimensions are its bounded dimensions besides MetricDimension, at
	// most MaxMetricDimensions.
	Dimensions []Dimension
}

// DimensionSets are the dimension sets each measurement of m is emitted
// with: MetricDimension alone, with each dimension, and with all of them
// (every subset, in declaration order), so an alarm or a graph can read a
// total, a total by one dimension, or the finest split.
func (m Metric) DimensionSets() [][]string {
	n := len(m.Dimensions)
	sets := make([][]string, 0, 1<<n)
	for mask := 0; mask < 1<<n; mask++ {
		set := []string{MetricDimension}
		for i, d := range m.Dimensions {
			if mask&(1<<i) != 0 {
				set = append(set, d.Name)
			}
		}
		sets = append(sets, set)
	}
	slices.SortStableFunc(sets, func(a, b []string) int { return len(a) - len(b) })
	return sets
}

// Dimension returns m's dimension named name.
func (m Metric) Dimension(name string) (Dimension, bool) {
	i := slices.IndexFunc(m.Dimensions, func(d Dimension) bool { return d.Name == name })
	if i < 0 {
		return Dimension{}, false
	}
	return m.Dimensions[i], true
}

// Validate checks m against the EMF specification and CloudWatch's
// identity rules, and dynastack's bound on dimensions.
func (m Metric) Validate() error {
	var errs []string
	if err := CheckMetricName(m.Name); err != nil {
		errs = append(errs, err.Error())
	}
	if !slices.Contains(Units, m.Unit) {
		errs = append(errs, fmt.Sprintf("unit %q is not a CloudWatch unit", m.Unit))
	}
	if len(m.Dimensions) > MaxMetricDimensions {
		errs = append(errs, fmt.Sprintf("%d dimensions: at most %d besides %q", len(m.Dimensions), MaxMetricDimensions, MetricDimension))
	}
	seen := map[string]bool{MetricDimension: true}
	for _, d := range m.Dimensions {
		if err := CheckDimensionName(d.Name); err != nil {
			errs = append(errs, err.Error())
		}
		if seen[d.Name] || d.Name == m.Name {
			errs = append(errs, fmt.Sprintf("dimension %q: named twice (or as the metric)", d.Name))
		}
		seen[d.Name] = true
		if len(d.Values) == 0 {
			errs = append(errs, fmt.Sprintf("dimension %q: list its values (a dimension is bounded)", d.Name))
		}
		for i, v := range d.Values {
			if err := CheckDimensionValue(v); err != nil {
				errs = append(errs, fmt.Sprintf("dimension %q: %v", d.Name, err))
			}
			if slices.Contains(d.Values[:i], v) {
				errs = append(errs, fmt.Sprintf("dimension %q: value %q listed twice", d.Name, v))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("metric %q: %s", m.Name, strings.Join(errs, "; "))
	}
	return nil
}

// reservedMembers are the log line's own members (platform/logx, slog):
// a metric or dimension of that name would read another value.
var reservedMembers = []string{"_aws", "time", "level", "msg", "service", "request_id", "trace_id", "correlation_id", "caller", "error"}

// CheckNamespace checks a namespace: 1–255 characters of 0-9A-Za-z . - _
// / # : and space, not starting with "AWS/" (AWS's own).
func CheckNamespace(ns string) error {
	if ns == "" || len(ns) > MaxNamespaceLen {
		return fmt.Errorf("namespace %q: 1 to %d characters", ns, MaxNamespaceLen)
	}
	for _, r := range ns {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune(".-_/#: ", r)) {
			return fmt.Errorf("namespace %q: character %q (allowed: 0-9A-Za-z . - _ / # : space)", ns, r)
		}
	}
	if strings.HasPrefix(ns, "AWS/") {
		return fmt.Errorf("namespace %q: AWS/ is reserved for AWS services", ns)
	}
	return nil
}

// CheckMetricName checks a metric name: 1–255 printable ASCII characters,
// not a member the log line already has.
func CheckMetricName(name string) error {
	if err := checkASCII("metric name", name, MaxMetricNameLen); err != nil {
		return err
	}
	if slices.Contains(reservedMembers, name) {
		return fmt.Errorf("metric name %q is a member every log line has", name)
	}
	return nil
}

// CheckDimensionName checks a dimension name: 1–255 printable ASCII
// characters, at least one not a space, not starting with a colon.
func CheckDimensionName(name string) error {
	if err := checkASCII("dimension name", name, MaxDimensionNameLen); err != nil {
		return err
	}
	if strings.HasPrefix(name, ":") {
		return fmt.Errorf("dimension name %q starts with a colon", name)
	}
	if name != MetricDimension && slices.Contains(reservedMembers, name) {
		return fmt.Errorf("dimension name %q is a member every log line has", name)
	}
	return nil
}

// CheckDimensionValue checks a dimension value: 1–1024 printable ASCII
// characters, at least one not a space.
func CheckDimensionValue(v string) error {
	return checkASCII("dimension value", v, MaxDimensionValueLen)
}

func checkASCII(what, s string, max int) error {
	if s == "" || len(s) > max || strings.TrimSpace(s) == "" {
		return fmt.Errorf("%s %q: 1 to %d characters, not all spaces", what, s, max)
	}
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			return fmt.Errorf("%s %q: only printable ASCII (found %q)", what, s, r)
		}
	}
	return nil
}
