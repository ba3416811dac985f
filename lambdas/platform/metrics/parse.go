package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/dynastack/dynastack/constructs/service"
)

// Measurement is one value of one metric under one dimension set, as
// CloudWatch Logs extracts it from an EMF line.
type Measurement struct {
	Namespace string
	Name      string
	Unit      string
	// Dimensions are the set's names and their values.
	Dimensions map[string]string
	Values     []float64
	// Timestamp is the line's, in milliseconds since the epoch.
	Timestamp int64
}

// ErrNotEMF: the line is JSON without an "_aws" member, an ordinary log
// line.
var ErrNotEMF = errors.New("metrics: not an EMF line")

// MaxValues is the most values a metric member may hold (an array).
const MaxValues = 100

// Parse reads one log line as the EMF specification defines it and
// returns its measurements: one per metric definition and dimension set
// of each directive. A line without "_aws" is ErrNotEMF; a line that
// breaks a rule of the specification (the _aws object, its Timestamp,
// CloudWatchMetrics of directives with a Namespace, Dimensions of at most
// 30 keys per set naming string members, at most 100 Metrics with Names
// naming number members and Units CloudWatch knows) is an error naming
// the rule. CloudWatch drops such a line's metrics.
func Parse(line []byte) ([]Measurement, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(line, &root); err != nil {
		return nil, fmt.Errorf("metrics: a line is one JSON object: %w", err)
	}
	raw, ok := root["_aws"]
	if !ok {
		return nil, ErrNotEMF
	}
	var meta struct {
		Timestamp         *json.Number `json:"Timestamp"`
		CloudWatchMetrics *[]struct {
			Namespace  *string    `json:"Namespace"`
			Dimensions [][]string `json:"Dimensions"`
			Metrics    *[]struct {
				Name              *string `json:"Name"`
				Unit              *string `json:"Unit"`
				StorageResolution *int    `json:"StorageResolution"`
			} `json:"Metrics"`
		} `json:"CloudWatchMetrics"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("metrics: _aws: %w", err)
	}
	if meta.Timestamp == nil {
		return nil, errors.New("metrics: _aws.Timestamp is required")
	}
	ts, err := meta.Timestamp.Int64()
	if err != nil || ts < 0 {
		return nil, fmt.Errorf("metrics: _aws.Timestamp %s: milliseconds since the epoch", meta.Timestamp)
	}
	if meta.CloudWatchMetrics == nil {
		return nil, errors.New("metrics: _aws.CloudWatchMetrics is required")
	}
	var out []Measurement
	for i, d := range *meta.CloudWatchMetrics {
		if d.Namespace == nil {
			return nil, fmt.Errorf("metrics: directive %d: Namespace is required", i)
		}
		if err := service.CheckNamespace(*d.Namespace); err != nil {
			return nil, fmt.Errorf("metrics: directive %d: %w", i, err)
		}
		if d.Dimensions == nil {
			return nil, fmt.Errorf("metrics: directive %d: Dimensions is required (an empty list for none)", i)
		}
		if d.Metrics == nil {
			return nil, fmt.Errorf("metrics: directive %d: Metrics is required", i)
		}
		if len(*d.Metrics) > service.MaxMetricsPerDirective {
			return nil, fmt.Errorf("metrics: directive %d: %d metrics, at most %d", i, len(*d.Metrics), service.MaxMetricsPerDirective)
		}
		sets := make([]map[string]string, 0, len(d.Dimensions))
		for _, set := range d.Dimensions {
			if len(set) > service.MaxDimensionsPerSet {
				return nil, fmt.Errorf("metrics: directive %d: a dimension set of %d keys, at most %d", i, len(set), service.MaxDimensionsPerSet)
			}
			dims := make(map[string]string, len(set))
			for _, name := range set {
				if err := checkDimensionName(name); err != nil {
					return nil, fmt.Errorf("metrics: directive %d: %w", i, err)
				}
				var v string
				if err := json.Unmarshal(root[name], &v); err != nil {
					return nil, fmt.Errorf("metrics: directive %d: dimension %q: the line's member must be a string", i, name)
				}
				if err := service.CheckDimensionValue(v); err != nil {
					return nil, fmt.Errorf("metrics: directive %d: %w", i, err)
				}
				dims[name] = v
			}
			sets = append(sets, dims)
		}
		if len(sets) == 0 {
			sets = append(sets, map[string]string{})
		}
		for _, m := range *d.Metrics {
			if m.Name == nil || *m.Name == "" {
				return nil, fmt.Errorf("metrics: directive %d: a metric without a Name", i)
			}
			if err := service.CheckMetricName(*m.Name); err != nil {
				return nil, fmt.Errorf("metrics: directive %d: %w", i, err)
			}
			unit := "None"
			if m.Unit != nil {
				unit = *m.Unit
				if !slices.Contains(service.Units, service.Unit(unit)) {
					return nil, fmt.Errorf("metrics: directive %d: metric %q: unit %q is not a CloudWatch unit", i, *m.Name, unit)
				}
			}
			if m.StorageResolution != nil && *m.StorageResolution != 1 && *m.StorageResolution != 60 {
				return nil, fmt.Errorf("metrics: directive %d: metric %q: StorageResolution is 1 or 60", i, *m.Name)
			}
			values, err := numbers(root[*m.Name])
			if err != nil {
				return nil, fmt.Errorf("metrics: directive %d: metric %q: %w", i, *m.Name, err)
			}
			for _, dims := range sets {
				out = append(out, Measurement{Namespace: *d.Namespace, Name: *m.Name, Unit: unit, Dimensions: dims, Values: values, Timestamp: ts})
			}
		}
	}
	return out, nil
}

// checkDimensionName is the specification's rule for a dimension name
// (service.CheckDimensionName adds dynastack's reserved members).
func checkDimensionName(name string) error {
	if name == "" || len(name) > service.MaxDimensionNameLen || name[0] == ':' || strings.TrimSpace(name) == "" {
		return fmt.Errorf("dimension name %q: 1 to %d characters, not starting with a colon", name, service.MaxDimensionNameLen)
	}
	return nil
}

// numbers reads a metric member: a number or an array of at most
// MaxValues numbers.
func numbers(raw json.RawMessage) ([]float64, error) {
	if raw == nil {
		return nil, errors.New("the line has no member of that name")
	}
	var one float64
	if err := json.Unmarshal(raw, &one); err == nil {
		if math.IsNaN(one) || math.IsInf(one, 0) {
			return nil, errors.New("the value must be a finite number")
		}
		return []float64{one}, nil
	}
	var many []float64
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New("the member must be a number or an array of numbers")
	}
	if len(many) > MaxValues {
		return nil, fmt.Errorf("%d values, at most %d", len(many), MaxValues)
	}
	return many, nil
}

// ParseLines reads every EMF line of a log (JSON lines, as the functions
// write them) and returns their measurements in order; other lines are
// skipped, and the first EMF line that breaks the specification is an
// error.
func ParseLines(log []byte) ([]Measurement, error) {
	var out []Measurement
	for line := range bytes.SplitSeq(log, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"_aws"`)) {
			continue
		}
		ms, err := Parse(line)
		if errors.Is(err, ErrNotEMF) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

// Find returns the measurements of ms named name whose dimensions are
// exactly dims.
func Find(ms []Measurement, name string, dims map[string]string) []Measurement {
	var out []Measurement
	for _, m := range ms {
		if m.Name == name && maps.Equal(m.Dimensions, dims) {
			out = append(out, m)
		}
	}
	return out
}

// Sum adds the values of ms.
func Sum(ms []Measurement) float64 {
	var s float64
	for _, m := range ms {
		for _, v := range m.Values {
			s += v
		}
	}
	return s
}
