package alarmeval

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpressions(t *testing.T) {
	vals := map[string]point{"a": {6, true}, "b": {3, true}, "z": {0, true}}
	for _, tt := range []struct {
		expr string
		want *float64
	}{
		{"a + b * 2", f(12)},
		{"(a + b) * 2", f(18)},
		{"a - b - 1", f(2)},
		{"a / b / 2", f(1)},
		{"-a + 1", f(-5)},
		{"a / z", nil},
		{"a + gone", nil},
		{"FILL(gone, 0) + a", f(6)},
		{"FILL(a, 0)", f(6)},
		{"a >= 6", f(1)},
		{"a > 6", f(0)},
		{"a == 6", f(1)},
		{"a != 6", f(0)},
		{"b < a", f(1)},
		{"b <= 2", f(0)},
		{"IF(a >= 20, 100 * b / a, 0)", f(0)},
		{"IF(a >= 5, 100 * b / a, 0)", f(50)},
		{"IF(gone >= 5, 1, 0)", nil},
		{"IF(1, FILL(gone, 7), gone)", f(7)},
		{"1.5e1 + .5", f(15.5)},
	} {
		t.Run(tt.expr, func(t *testing.T) {
			n, err := parseExpr(tt.expr)
			require.NoError(t, err)
			got := n.eval(vals)
			if tt.want == nil {
				assert.False(t, got.ok, "missing datapoint")
				return
			}
			require.True(t, got.ok, "a datapoint")
			assert.InDelta(t, *tt.want, got.v, 1e-9, "value")
		})
	}
}

func TestExpressionsRefused(t *testing.T) {
	for _, tt := range []struct{ expr, says string }{
		{"METRICS()", "function METRICS is not evaluated locally"},
		{"ANOMALY_DETECTION_BAND(m, 2)", "function ANOMALY_DETECTION_BAND"},
		{"FILL(m, REPEAT)", "REPEAT, LINEAR"},
		{"IF(a, b)", "IF takes 3 arguments"},
		{"a +", "ends early"},
		{"(a + b", `expected ")"`},
		{"a = b", "comparisons are"},
		{"a $ b", "character"},
		{"a b", "unexpected"},
	} {
		_, err := parseExpr(tt.expr)
		assert.ErrorContains(t, err, tt.says, tt.expr)
	}
}

func TestStatistics(t *testing.T) {
	vs := []float64{5, 1, 4, 2, 3}
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	for _, tt := range []struct {
		stat string
		vs   []float64
		want float64
	}{
		{"Sum", vs, 15}, {"Maximum", vs, 5}, {"Minimum", vs, 1}, {"Average", vs, 3}, {"SampleCount", vs, 5},
		{"p50", vs, 3}, {"p99", vs, 5}, {"p20", vs, 1}, {"p21", vs, 2},
		{"p99", hundred, 99}, {"p99.5", hundred, 100}, {"p1", hundred, 1}, {"p100", hundred, 100},
	} {
		assert.Equal(t, tt.want, Statistic(tt.stat, tt.vs), "%s of %v", tt.stat, len(tt.vs))
	}
	assert.ErrorContains(t, checkStat("tm99"), "not evaluated locally", "trimmed mean")
	assert.NoError(t, checkStat("p99.9"), "p99.9")
}

// alarm builds an alarm definition from template JSON.
func alarm(t *testing.T, props string) *Def {
	t.Helper()
	res := map[string]json.RawMessage{"A": json.RawMessage(`{"Type":"AWS::CloudWatch::Alarm","Properties":` + props + `}`)}
	defs, err := FromTemplate("s", res, func(id, attr string) (string, error) { return "local-" + id + attr, nil })
	require.NoError(t, err)
	require.Len(t, defs, 1)
	return defs[0]
}

// single is a single-metric alarm on dynastack/X (dimension fn=Ref F).
func single(stat string, threshold float64, op string, periods, toAlarm int, missing string) string {
	return fmt.Sprintf(`{"MetricName":"X","Namespace":"dynastack","Dimensions":[{"Name":"fn","Value":{"Ref":"F"}}],"Period":300,%q:%q,
		"Threshold":%g,"ComparisonOperator":%q,"EvaluationPeriods":%d,"DatapointsToAlarm":%d,"TreatMissingData":%q}`,
		map[bool]string{true: "ExtendedStatistic", false: "Statistic"}[stat[0] == 'p'], stat, threshold, op, periods, toAlarm, missing)
}

// The scenarios of CloudWatch's documentation, with a period of 1 s local
// (Scale: 300 s → 300 ms, so the test steps through periods quickly by
// moving "now").
func TestEvaluation(t *testing.T) {
	clock := Clock{Scale: time.Millisecond}
	period := clock.Period(300)
	t0 := time.Unix(1_800_000_000, 0).Truncate(period)
	const ge = "GreaterThanOrEqualToThreshold"
	// per period: values published in it (nil: none, a missing datapoint).
	for _, tt := range []struct {
		name    string
		props   string
		periods [][]float64
		start   string // the state before (INSUFFICIENT_DATA by default)
		want    string
	}{
		{"one breaching period", single("Sum", 1, ge, 1, 1, "notBreaching"), [][]float64{{1}}, "", Alarm},
		{"sum under", single("Sum", 3, ge, 1, 1, "notBreaching"), [][]float64{{1, 1}}, "", OK},
		{"sum over", single("Sum", 3, ge, 1, 1, "notBreaching"), [][]float64{{1, 1, 1}}, "", Alarm},
		{"greater than, equal", single("Maximum", 3, "GreaterThanThreshold", 1, 1, "notBreaching"), [][]float64{{3}}, "", OK},
		{"less than", single("Minimum", 3, "LessThanThreshold", 1, 1, "notBreaching"), [][]float64{{2, 9}}, "", Alarm},
		{"less or equal", single("Average", 3, "LessThanOrEqualToThreshold", 1, 1, "notBreaching"), [][]float64{{2, 4}}, "", Alarm},
		{"p99 of 20: the slowest", single("p99", 8000, ge, 1, 1, "notBreaching"), [][]float64{append(repeat(19, 100), 10000)}, "", Alarm},
		{"p50 of 20", single("p50", 8000, ge, 1, 1, "notBreaching"), [][]float64{append(repeat(19, 100), 10000)}, "", OK},
		{"SampleCount", single("SampleCount", 3, ge, 1, 1, "notBreaching"), [][]float64{{0, 0, 0}}, "", Alarm},
		{"2 of 2 needed, 1 breached", single("Sum", 1, ge, 2, 2, "notBreaching"), [][]float64{{0}, {1}}, "", OK},
		{"2 of 2 breached", single("Sum", 1, ge, 2, 2, "notBreaching"), [][]float64{{1}, {1}}, "", Alarm},
		{"3 periods, 2 to alarm", single("Sum", 1, ge, 3, 2, "notBreaching"), [][]float64{{1}, {0}, {1}}, "", Alarm},
		{"only the last periods count", single("Sum", 1, ge, 2, 2, "notBreaching"), [][]float64{{1}, {1}, {0}}, "", OK},
		{"notBreaching: nothing published", single("Sum", 1, ge, 1, 1, "notBreaching"), [][]float64{nil}, "", OK},
		{"breaching: nothing published", single("Sum", 1, ge, 1, 1, "breaching"), [][]float64{nil}, "", Alarm},
		{"missing: nothing published", single("Sum", 1, ge, 1, 1, "missing"), [][]float64{nil}, Alarm, InsufficientData},
		{"ignore: nothing published keeps ALARM", single("Sum", 1, ge, 1, 1, "ignore"), [][]float64{nil}, Alarm, Alarm},
		{"ignore: nothing published keeps OK", single("Sum", 1, ge, 1, 1, "ignore"), [][]float64{nil}, OK, OK},
		{"missing: a missing period is not counted", single("Sum", 1, ge, 3, 2, "missing"), [][]float64{{1}, nil, {1}}, "", Alarm},
		{"breaching: a missing period counts", single("Sum", 1, ge, 2, 2, "breaching"), [][]float64{{1}, nil}, "", Alarm},
		{"notBreaching: a missing period is good", single("Sum", 1, ge, 2, 2, "notBreaching"), [][]float64{{1}, nil}, "", OK},
		{"default is missing", `{"MetricName":"X","Namespace":"dynastack","Period":300,"Statistic":"Sum","Threshold":1,"ComparisonOperator":"` + ge + `","EvaluationPeriods":1}`,
			[][]float64{nil}, "", InsufficientData},
		{"AWS/DynamoDB ignores missing data, whatever the template says",
			`{"MetricName":"ReadThrottleEvents","Namespace":"AWS/DynamoDB","Period":300,"Statistic":"Sum","Threshold":1,"ComparisonOperator":"` + ge + `","EvaluationPeriods":1,"TreatMissingData":"notBreaching"}`,
			[][]float64{nil}, Alarm, Alarm},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := alarm(t, tt.props)
			var s Store
			for i, vs := range tt.periods {
				for j, v := range vs {
					s.Put("dynastack", "X", map[string]string{"fn": "local-F"}, v, t0.Add(time.Duration(i)*period+time.Duration(j)))
					s.Put("AWS/DynamoDB", "ReadThrottleEvents", map[string]string{}, v, t0.Add(time.Duration(i)*period+time.Duration(j)))
				}
			}
			// Another dimension set is another metric.
			s.Put("dynastack", "X", map[string]string{"fn": "local-G"}, 1e9, t0)
			e := &Evaluator{Store: &s, Clock: clock}
			e.Add(d)
			if tt.start != "" {
				e.status[d.Name].State = tt.start
			}
			// Just after the last period ends: it is the newest complete one.
			e.Evaluate(t0.Add(time.Duration(len(tt.periods))*period + period/10))
			assert.Equal(t, tt.want, e.Statuses()[0].State, "state (%s)", e.Statuses()[0].Reason)
		})
	}
}

// The templates' metric math alarms, by hand: the API's 5xx rate without
// 503s, and a function's error rate, each over minSamples.
func TestMetricMath(t *testing.T) {
	clock := Clock{Scale: time.Millisecond}
	period := clock.Period(300)
	now := time.Unix(1_800_000_000, 0).Truncate(period).Add(period / 2)
	const serverErrors = `{"ComparisonOperator":"GreaterThanOrEqualToThreshold","EvaluationPeriods":1,"Threshold":5,"TreatMissingData":"notBreaching","Metrics":[
		{"Expression":"IF(whole >= 20, 100 * part / whole, 0)","Id":"expr_1","ReturnData":true},
		{"Expression":"FILL(errors, 0) - FILL(unavailable, 0)","Id":"part","ReturnData":false},
		{"Id":"errors","MetricStat":{"Metric":{"Dimensions":[{"Name":"ApiId","Value":{"Ref":"Api"}}],"MetricName":"5xx","Namespace":"AWS/ApiGateway"},"Period":300,"Stat":"Sum"},"ReturnData":false},
		{"Id":"unavailable","MetricStat":{"Metric":{"Dimensions":[{"Name":"service","Value":"itsm"}],"MetricName":"Unavailable","Namespace":"dynastack"},"Period":300,"Stat":"Sum"},"ReturnData":false},
		{"Id":"whole","MetricStat":{"Metric":{"Dimensions":[{"Name":"ApiId","Value":{"Ref":"Api"}}],"MetricName":"Count","Namespace":"AWS/ApiGateway"},"Period":300,"Stat":"Sum"},"ReturnData":false}]}`
	api := map[string]string{"ApiId": "local-Api"}
	for _, tt := range []struct {
		name                         string
		requests, errors, unavailble int
		want                         string
		value                        *float64
	}{
		{"19 requests, all 5xx: under the minimum", 19, 19, 0, OK, f(0)},
		{"20 requests, one 5xx: 5%", 20, 1, 0, Alarm, f(5)},
		{"40 requests, one 5xx: 2.5%", 40, 1, 0, OK, f(2.5)},
		{"20 requests, two 5xx, both 503", 20, 2, 2, OK, f(0)},
		{"20 requests, three 5xx, two 503", 20, 3, 2, Alarm, f(5)},
		{"no requests: missing", 0, 0, 0, OK, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s Store
			for i := 0; i < tt.requests; i++ {
				s.Put("AWS/ApiGateway", "Count", api, 1, now)
				s.Put("AWS/ApiGateway", "5xx", api, b2f(i < tt.errors), now)
			}
			for i := 0; i < tt.unavailble; i++ {
				s.Put("dynastack", "Unavailable", map[string]string{"service": "itsm"}, 1, now)
			}
			d := alarm(t, serverErrors)
			assert.Equal(t, "AWS/ApiGateway/5xx+AWS/ApiGateway/Count+dynastack/Unavailable", d.Kind(), "kind")
			e := &Evaluator{Store: &s, Clock: clock}
			e.Add(d)
			tr := e.Evaluate(now.Add(period))
			require.Len(t, tr, 1, "a transition from INSUFFICIENT_DATA")
			assert.Equal(t, tt.want, tr[0].To, "state (%s)", tr[0].Reason)
			dp := tr[0].Datapoints[0].Value
			if tt.value == nil {
				assert.Nil(t, dp, "datapoint")
				return
			}
			require.NotNil(t, dp, "datapoint")
			assert.InDelta(t, *tt.value, *dp, 1e-9, "datapoint")
		})
	}
}

// A datapoint counts once its period is over, and only then: published in
// the last moment of a period, it is evaluated after the period ends.
func TestCompletePeriods(t *testing.T) {
	clock := Clock{Scale: time.Millisecond}
	period := clock.Period(300)
	start := time.Unix(1_800_000_000, 0).Truncate(period)
	d := alarm(t, single("Sum", 1, "GreaterThanOrEqualToThreshold", 1, 1, "notBreaching"))
	var s Store
	s.Put("dynastack", "X", map[string]string{"fn": "local-F"}, 1, start.Add(period-time.Microsecond))
	e := &Evaluator{Store: &s, Clock: clock}
	e.Add(d)
	e.Evaluate(start.Add(period - time.Microsecond/2))
	assert.Equal(t, OK, e.Statuses()[0].State, "while its period runs")
	e.Evaluate(start.Add(period + period/2))
	assert.Equal(t, Alarm, e.Statuses()[0].State, "once its period is over")
	e.Evaluate(start.Add(2*period + period/2))
	assert.Equal(t, OK, e.Statuses()[0].State, "a period later")
}

func TestAlarmsRefused(t *testing.T) {
	for _, tt := range []struct{ props, says string }{
		{`{"MetricName":"X","Namespace":"n","Period":300,"Statistic":"tm90","Threshold":1,"ComparisonOperator":"GreaterThanThreshold","EvaluationPeriods":1}`, "statistic"},
		{`{"MetricName":"X","Namespace":"n","Period":300,"Statistic":"Sum","Threshold":1,"ComparisonOperator":"LessThanLowerOrGreaterThanUpperThreshold","EvaluationPeriods":1}`, "ComparisonOperator"},
		{`{"MetricName":"X","Namespace":"n","Period":300,"Statistic":"Sum","Threshold":1,"ComparisonOperator":"GreaterThanThreshold","EvaluationPeriods":2,"DatapointsToAlarm":3}`, "DatapointsToAlarm"},
		{`{"Metrics":[{"Id":"e","Expression":"a + 1"}],"Threshold":1,"ComparisonOperator":"GreaterThanThreshold","EvaluationPeriods":1}`, "reads a"},
		{`{"Metrics":[{"Id":"e","Expression":"SUM(METRICS())"}],"Threshold":1,"ComparisonOperator":"GreaterThanThreshold","EvaluationPeriods":1}`, "function METRICS"},
	} {
		res := map[string]json.RawMessage{"A": json.RawMessage(`{"Type":"AWS::CloudWatch::Alarm","Properties":` + tt.props + `}`)}
		_, err := FromTemplate("s", res, func(id, attr string) (string, error) { return id, nil })
		assert.ErrorContains(t, err, tt.says, tt.props)
	}
}

func f(v float64) *float64 { return &v }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func repeat(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}
