// Package alarmeval evaluates a stage's CloudWatch alarms locally: it reads
// the AWS::CloudWatch::Alarm resources of the templates, keeps the
// datapoints the local runner collects (the functions' EMF lines, and
// what AWS would publish for the emulated Lambda, SQS, API Gateway and
// DynamoDB), and evaluates each alarm as CloudWatch does: the statistic
// of each metric over each period, metric math across the metrics,
// the threshold and comparison, the last EvaluationPeriods datapoints
// of which DatapointsToAlarm must breach, and TreatMissingData.
//
// Time is scaled: Clock maps an alarm's period (300 s in every template)
// onto a short local one, so a test or a developer sees an alarm move in
// seconds. Ages that alarms compare with periods (an SQS queue's oldest
// message, a stream consumer's iterator age) are measured on the same
// scaled clock by the runner; a function's Duration is real time, as its
// timeout is.
//
// What CloudWatch's documentation defines and this follows
// (docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
// AlarmThatSendsEmail.html, alarms-and-missing-data):
//   - an alarm starts in INSUFFICIENT_DATA;
//   - ALARM when at least DatapointsToAlarm (default EvaluationPeriods) of
//     the last EvaluationPeriods datapoints breach, else OK;
//   - a missing datapoint is good (notBreaching), bad (breaching), not
//     counted (missing: INSUFFICIENT_DATA when every one is missing), or
//     not counted with the state kept when every one is missing (ignore);
//   - alarms on a metric of the AWS/DynamoDB namespace ignore missing data
//     whatever TreatMissingData says (PutMetricAlarm's reference): an alarm
//     on a bare throttle metric stays in ALARM until a period with data
//     says otherwise (the templates' table alarms FILL their terms with 0,
//     so they have a datapoint in every period);
//   - in metric math, a datapoint missing in any term is missing in the
//     result (FILL says otherwise), and x/0 has no datapoint.
package alarmeval

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The states of an alarm.
const (
	OK               = "OK"
	Alarm            = "ALARM"
	InsufficientData = "INSUFFICIENT_DATA"
)

// MetricStat is one metric an alarm reads, with its statistic and period.
type MetricStat struct {
	Namespace, Name string
	Dimensions      map[string]string
	// Stat is Sum, Maximum, Minimum, Average, SampleCount or pNN.
	Stat          string
	PeriodSeconds int
}

// Def is an alarm as the template defines it.
type Def struct {
	// Stack and LogicalID name it; Name is "<stack>-<logical id>" (the
	// templates give no AlarmName: CloudFormation would add a suffix).
	Stack, LogicalID, Name, Description string
	// Metrics are the alarm's metrics and expressions by id; Return is the
	// id whose series is compared (a single-metric alarm's is "m").
	Metrics map[string]MetricStat
	Exprs   map[string]string
	Return  string
	// PeriodSeconds is the period of the compared series.
	PeriodSeconds      int
	Threshold          float64
	ComparisonOperator string
	EvaluationPeriods  int
	DatapointsToAlarm  int
	TreatMissingData   string

	parsed map[string]node
}

// Kind is what the alarm watches: its metrics' "namespace/name", sorted,
// joined by "+". Alarms of one kind fire on the same fault (every
// function's Errors alarm, every table's ReadThrottles alarm).
func (d *Def) Kind() string {
	set := map[string]bool{}
	for _, m := range d.Metrics {
		set[m.Namespace+"/"+m.Name] = true
	}
	return strings.Join(slices.Sorted(maps.Keys(set)), "+")
}

// Resolver names a resource of the template locally: a Ref (attr "") or
// a Fn::GetAtt of logical id id. An error refuses the alarm.
type Resolver func(id, attr string) (string, error)

// FromTemplate reads every alarm of a template's Resources.
func FromTemplate(stack string, resources map[string]json.RawMessage, resolve Resolver) ([]*Def, error) {
	var out []*Def
	for _, id := range slices.Sorted(maps.Keys(resources)) {
		var r struct {
			Type       string
			Properties json.RawMessage
		}
		if err := json.Unmarshal(resources[id], &r); err != nil {
			return nil, fmt.Errorf("alarmeval: %s %s: %w", stack, id, err)
		}
		if r.Type != "AWS::CloudWatch::Alarm" {
			continue
		}
		d, err := parseAlarm(stack, id, r.Properties, resolve)
		if err != nil {
			return nil, fmt.Errorf("alarmeval: alarm %s of %s: %w", id, stack, err)
		}
		out = append(out, d)
	}
	return out, nil
}

type rawMetric struct {
	Dimensions []struct {
		Name  string
		Value json.RawMessage
	}
	MetricName, Namespace string
}

func parseAlarm(stack, id string, raw json.RawMessage, resolve Resolver) (*Def, error) {
	var p struct {
		AlarmDescription                     string
		ComparisonOperator                   string
		EvaluationPeriods, DatapointsToAlarm int
		Threshold                            *float64
		TreatMissingData                     string
		Statistic, ExtendedStatistic         string
		Period                               int
		MetricName, Namespace                string
		Dimensions                           []struct {
			Name  string
			Value json.RawMessage
		}
		Metrics []struct {
			Id         string
			Expression string
			Period     int
			ReturnData *bool
			MetricStat *struct {
				Metric rawMetric
				Period int
				Stat   string
			}
		}
		ThresholdMetricId string
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	d := &Def{Stack: stack, LogicalID: id, Name: stack + "-" + id, Description: p.AlarmDescription,
		Metrics: map[string]MetricStat{}, Exprs: map[string]string{}, parsed: map[string]node{},
		ComparisonOperator: p.ComparisonOperator, EvaluationPeriods: p.EvaluationPeriods, DatapointsToAlarm: p.DatapointsToAlarm,
		TreatMissingData: p.TreatMissingData}
	if p.ThresholdMetricId != "" {
		return nil, fmt.Errorf("ThresholdMetricId (an anomaly band) is not evaluated locally")
	}
	if p.Threshold == nil {
		return nil, fmt.Errorf("no Threshold")
	}
	d.Threshold = *p.Threshold
	if _, ok := compare[p.ComparisonOperator]; !ok {
		return nil, fmt.Errorf("ComparisonOperator %q is not evaluated locally (the four threshold comparisons are)", p.ComparisonOperator)
	}
	if d.EvaluationPeriods < 1 {
		return nil, fmt.Errorf("EvaluationPeriods %d", d.EvaluationPeriods)
	}
	if d.DatapointsToAlarm == 0 {
		d.DatapointsToAlarm = d.EvaluationPeriods
	}
	if d.DatapointsToAlarm < 1 || d.DatapointsToAlarm > d.EvaluationPeriods {
		return nil, fmt.Errorf("DatapointsToAlarm %d of %d periods", d.DatapointsToAlarm, d.EvaluationPeriods)
	}
	switch d.TreatMissingData {
	case "":
		d.TreatMissingData = "missing"
	case "missing", "ignore", "breaching", "notBreaching":
	default:
		return nil, fmt.Errorf("TreatMissingData %q", d.TreatMissingData)
	}
	metric := func(m rawMetric, stat string, period int) (MetricStat, error) {
		if err := checkStat(stat); err != nil {
			return MetricStat{}, err
		}
		if period <= 0 {
			return MetricStat{}, fmt.Errorf("metric %s: no Period", m.MetricName)
		}
		dims := map[string]string{}
		for _, dim := range m.Dimensions {
			v, err := value(dim.Value, resolve)
			if err != nil {
				return MetricStat{}, fmt.Errorf("metric %s: dimension %s: %w", m.MetricName, dim.Name, err)
			}
			dims[dim.Name] = v
		}
		return MetricStat{Namespace: m.Namespace, Name: m.MetricName, Dimensions: dims, Stat: stat, PeriodSeconds: period}, nil
	}
	if p.MetricName != "" {
		stat := p.Statistic
		if stat == "" {
			stat = p.ExtendedStatistic
		}
		m, err := metric(rawMetric{Dimensions: p.Dimensions, MetricName: p.MetricName, Namespace: p.Namespace}, stat, p.Period)
		if err != nil {
			return nil, err
		}
		d.Metrics["m"], d.Return, d.PeriodSeconds = m, "m", m.PeriodSeconds
		return d, nil
	}
	if len(p.Metrics) == 0 {
		return nil, fmt.Errorf("neither MetricName nor Metrics")
	}
	for _, m := range p.Metrics {
		switch {
		case m.MetricStat != nil:
			ms, err := metric(m.MetricStat.Metric, m.MetricStat.Stat, m.MetricStat.Period)
			if err != nil {
				return nil, err
			}
			d.Metrics[m.Id] = ms
		case m.Expression != "":
			n, err := parseExpr(m.Expression)
			if err != nil {
				return nil, err
			}
			d.Exprs[m.Id], d.parsed[m.Id] = m.Expression, n
		default:
			return nil, fmt.Errorf("metric %s: neither MetricStat nor Expression", m.Id)
		}
		if m.ReturnData == nil || *m.ReturnData {
			if d.Return != "" {
				return nil, fmt.Errorf("two metrics return data (%s, %s)", d.Return, m.Id)
			}
			d.Return = m.Id
		}
	}
	if d.Return == "" {
		return nil, fmt.Errorf("no metric returns data")
	}
	// Every id an expression reads exists, and no expression reads itself
	// through others.
	for id, n := range d.parsed {
		if err := d.checkRefs(id, n, map[string]bool{}); err != nil {
			return nil, err
		}
	}
	for _, m := range d.Metrics {
		if d.PeriodSeconds == 0 || m.PeriodSeconds < d.PeriodSeconds {
			d.PeriodSeconds = m.PeriodSeconds
		}
	}
	for _, m := range d.Metrics {
		if m.PeriodSeconds != d.PeriodSeconds {
			return nil, fmt.Errorf("metrics of periods %d and %d (one period per alarm here)", m.PeriodSeconds, d.PeriodSeconds)
		}
	}
	return d, nil
}

func (d *Def) checkRefs(id string, n node, seen map[string]bool) error {
	if seen[id] {
		return fmt.Errorf("expression %s reads itself", id)
	}
	seen[id] = true
	refs := map[string]bool{}
	n.ids(refs)
	for r := range refs {
		if _, ok := d.Metrics[r]; ok {
			continue
		}
		sub, ok := d.parsed[r]
		if !ok {
			return fmt.Errorf("expression %s (%q) reads %s, which is not a metric or expression of the alarm", id, d.Exprs[id], r)
		}
		if err := d.checkRefs(r, sub, maps.Clone(seen)); err != nil {
			return err
		}
	}
	return nil
}

// value is a dimension value: a literal, a Ref or a Fn::GetAtt.
func value(raw json.RawMessage, resolve Resolver) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var fn struct {
		Ref    string
		GetAtt []string `json:"Fn::GetAtt"`
	}
	if err := json.Unmarshal(raw, &fn); err != nil {
		return "", fmt.Errorf("value %s: a string, Ref or Fn::GetAtt", raw)
	}
	switch {
	case fn.Ref != "":
		return resolve(fn.Ref, "")
	case len(fn.GetAtt) == 2:
		return resolve(fn.GetAtt[0], fn.GetAtt[1])
	}
	return "", fmt.Errorf("value %s: a string, Ref or Fn::GetAtt", raw)
}

func checkStat(stat string) error {
	switch stat {
	case "Sum", "Maximum", "Minimum", "Average", "SampleCount":
		return nil
	}
	if p, ok := percentile(stat); ok && p > 0 && p <= 100 {
		return nil
	}
	return fmt.Errorf("statistic %q is not evaluated locally (Sum, Maximum, Minimum, Average, SampleCount, pNN are)", stat)
}

func percentile(stat string) (float64, bool) {
	if len(stat) < 2 || stat[0] != 'p' {
		return 0, false
	}
	p, err := strconv.ParseFloat(stat[1:], 64)
	return p, err == nil
}

// Statistic computes stat over the values of one period (at least one).
func Statistic(stat string, vs []float64) float64 {
	switch stat {
	case "Sum":
		s := 0.0
		for _, v := range vs {
			s += v
		}
		return s
	case "Maximum":
		return slices.Max(vs)
	case "Minimum":
		return slices.Min(vs)
	case "Average":
		return Statistic("Sum", vs) / float64(len(vs))
	case "SampleCount":
		return float64(len(vs))
	}
	p, _ := percentile(stat)
	// Nearest rank: the smallest value at or above which p percent of the
	// values lie.
	s := slices.Sorted(slices.Values(vs))
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

var compare = map[string]func(v, t float64) bool{
	"GreaterThanOrEqualToThreshold": func(v, t float64) bool { return v >= t },
	"GreaterThanThreshold":          func(v, t float64) bool { return v > t },
	"LessThanThreshold":             func(v, t float64) bool { return v < t },
	"LessThanOrEqualToThreshold":    func(v, t float64) bool { return v <= t },
}

// Store holds the datapoints published, by metric identity.
type Store struct {
	mu      sync.Mutex
	samples map[string][]sample
}

type sample struct {
	at time.Time
	v  float64
}

func key(ns, name string, dims map[string]string) string {
	var b strings.Builder
	b.WriteString(ns + "\x00" + name)
	for _, k := range slices.Sorted(maps.Keys(dims)) {
		b.WriteString("\x00" + k + "=" + dims[k])
	}
	return b.String()
}

// Put publishes value v of a metric at time at (PutMetricData's, or an
// EMF line's): a metric is its namespace, name and exact dimensions.
func (s *Store) Put(ns, name string, dims map[string]string, v float64, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.samples == nil {
		s.samples = map[string][]sample{}
	}
	k := key(ns, name, dims)
	s.samples[k] = append(s.samples[k], sample{at, v})
}

// values are the samples of a metric in [from, to).
func (s *Store) values(m MetricStat, from, to time.Time) []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []float64
	for _, x := range s.samples[key(m.Namespace, m.Name, m.Dimensions)] {
		if !x.at.Before(from) && x.at.Before(to) {
			out = append(out, x.v)
		}
	}
	return out
}

// Prune drops samples older than before.
func (s *Store) Prune(before time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, xs := range s.samples {
		i := 0
		for i < len(xs) && xs[i].at.Before(before) {
			i++
		}
		s.samples[k] = xs[i:]
	}
}

// Clock maps an alarm's period in seconds to local time: Scale is the
// local duration of one second of alarm time (time.Second/150 makes a
// 300 s period 2 s).
type Clock struct{ Scale time.Duration }

// Period is the local length of a period of seconds.
func (c Clock) Period(seconds int) time.Duration { return time.Duration(seconds) * c.Scale }

// Datapoint is one period's value of an alarm's compared series.
type Datapoint struct {
	// Start is the period's start.
	Start time.Time `json:"start"`
	// Value is nil for a missing datapoint.
	Value *float64 `json:"value"`
}

// Status is an alarm's state after an evaluation.
type Status struct {
	Def        *Def
	State      string
	Reason     string
	Datapoints []Datapoint
	// Since is when the alarm entered State.
	Since time.Time
}

// Transition is a change of an alarm's state.
type Transition struct {
	Alarm      *Def
	From, To   string
	Reason     string
	Datapoints []Datapoint
}

// Evaluator evaluates alarms against a store.
type Evaluator struct {
	Store *Store
	Clock Clock

	mu     sync.Mutex
	alarms []*Def
	status map[string]*Status
}

// Add registers alarms, each in INSUFFICIENT_DATA.
func (e *Evaluator) Add(defs ...*Def) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.status == nil {
		e.status = map[string]*Status{}
	}
	for _, d := range defs {
		e.alarms = append(e.alarms, d)
		e.status[d.Name] = &Status{Def: d, State: InsufficientData, Reason: "Unchecked: initial alarm creation"}
	}
}

// Statuses are every alarm's status, by name.
func (e *Evaluator) Statuses() []Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Status, 0, len(e.alarms))
	for _, d := range e.alarms {
		out = append(out, *e.status[d.Name])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Def.Name < out[j].Def.Name })
	return out
}

// Evaluate evaluates every alarm at now and returns the transitions.
// The newest datapoint is the last period complete at now: a datapoint is
// evaluated once its period has ended, whenever the evaluations fall (one
// published in the last moment of a period counts as much as one at its
// start).
func (e *Evaluator) Evaluate(now time.Time) []Transition {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Transition
	for _, d := range e.alarms {
		st := e.status[d.Name]
		dps := d.Series(e.Store, e.Clock, now)
		state, reason := d.decide(dps, st.State)
		st.Datapoints = dps
		if state != st.State {
			out = append(out, Transition{Alarm: d, From: st.State, To: state, Reason: reason, Datapoints: dps})
			st.State, st.Since = state, now
		}
		st.Reason = reason
	}
	return out
}

// Series are the last EvaluationPeriods datapoints of the compared
// series complete at now, oldest first.
func (d *Def) Series(s *Store, c Clock, now time.Time) []Datapoint {
	period := c.Period(d.PeriodSeconds)
	cur := now.Truncate(period).Add(-period)
	out := make([]Datapoint, 0, d.EvaluationPeriods)
	for i := d.EvaluationPeriods - 1; i >= 0; i-- {
		from := cur.Add(-time.Duration(i) * period)
		vals := map[string]point{}
		for id, m := range d.Metrics {
			if vs := s.values(m, from, from.Add(period)); len(vs) > 0 {
				vals[id] = point{Statistic(m.Stat, vs), true}
			}
		}
		p := d.value(d.Return, vals)
		dp := Datapoint{Start: from}
		if p.ok && !math.IsNaN(p.v) && !math.IsInf(p.v, 0) {
			v := p.v
			dp.Value = &v
		}
		out = append(out, dp)
	}
	return out
}

// value is series id's value in one period.
func (d *Def) value(id string, vals map[string]point) point {
	if _, ok := d.Metrics[id]; ok {
		return vals[id]
	}
	// An expression reads metrics and other expressions: evaluate those
	// first into vals.
	refs := map[string]bool{}
	d.parsed[id].ids(refs)
	for r := range refs {
		if _, ok := d.Metrics[r]; !ok {
			vals[r] = d.value(r, vals)
		}
	}
	return d.parsed[id].eval(vals)
}

// treatment is the alarm's missing-data rule, AWS/DynamoDB's override
// applied.
func (d *Def) treatment() string {
	for _, m := range d.Metrics {
		if m.Namespace == "AWS/DynamoDB" {
			return "ignore"
		}
	}
	return d.TreatMissingData
}

// Decide is the state datapoints give an alarm now in state current.
func (d *Def) decide(dps []Datapoint, current string) (string, string) {
	breach, present := 0, 0
	treat := d.treatment()
	var seen []string
	for _, dp := range dps {
		if dp.Value == nil {
			seen = append(seen, "missing")
			switch treat {
			case "breaching":
				breach++
			}
			continue
		}
		present++
		seen = append(seen, strconv.FormatFloat(*dp.Value, 'g', 6, 64))
		if compare[d.ComparisonOperator](*dp.Value, d.Threshold) {
			breach++
		}
	}
	desc := fmt.Sprintf("[%s] (%s %s)", strings.Join(seen, ", "), opSymbol[d.ComparisonOperator], strconv.FormatFloat(d.Threshold, 'g', 6, 64))
	if present == 0 {
		switch treat {
		case "missing":
			return InsufficientData, "Insufficient Data: no datapoint in " + strconv.Itoa(len(dps)) + " periods"
		case "ignore":
			return current, "no datapoint in " + strconv.Itoa(len(dps)) + " periods: state kept (missing data ignored)"
		}
	}
	if breach >= d.DatapointsToAlarm {
		return Alarm, fmt.Sprintf("Threshold Crossed: %d of the last %d datapoints %s breached, %d needed", breach, len(dps), desc, d.DatapointsToAlarm)
	}
	return OK, fmt.Sprintf("Threshold not crossed: %d of the last %d datapoints %s breached, %d needed", breach, len(dps), desc, d.DatapointsToAlarm)
}

var opSymbol = map[string]string{
	"GreaterThanOrEqualToThreshold": ">=", "GreaterThanThreshold": ">",
	"LessThanThreshold": "<", "LessThanOrEqualToThreshold": "<=",
}
