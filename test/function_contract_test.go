package test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynastack/dynastack/constructs/policyjson"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/test/cdkapp"
)

// Function and API contracts from the ITSM issue, applied to every service:
// provided.al2023 on arm64, X-Ray active, log retention per stage, IAM
// authorization on every route but Stak's end-user routes (JWT), and DynamoDB grants without wildcard actions
// that name only tables and indexes of the function's own stack.
func TestFunctionContracts(t *testing.T) {
	retention := map[string]float64{"dev": 7, "stage": 30, "prod": 180}
	functions := 0
	for stage, stacks := range asm.Templates {
		for id, tmpl := range stacks {
			logGroups := tmpl.Resources("AWS::Logs::LogGroup")
			for lid, fn := range tmpl.Resources("AWS::Lambda::Function") {
				functions++
				where := fmt.Sprintf("%s/%s %s", stage, id, lid)
				p := props(fn)
				assert.Equal(t, "provided.al2023", p["Runtime"], "%s: runtime", where)
				assert.Equal(t, "[arm64]", fmt.Sprint(p["Architectures"]), "%s: architectures", where)
				assert.Equal(t, "bootstrap", p["Handler"], "%s: handler", where)
				tc, _ := p["TracingConfig"].(map[string]any)
				assert.Equal(t, "Active", tc["Mode"], "%s: tracing %v", where, p["TracingConfig"])
				lc, _ := p["LoggingConfig"].(map[string]any)
				ref, _ := lc["LogGroup"].(map[string]any)
				lg, ok := logGroups[fmt.Sprint(ref["Ref"])]
				if assert.True(t, ok, "%s: no log group of its own (LoggingConfig %v)", where, p["LoggingConfig"]) {
					assert.Equal(t, retention[stage], props(lg)["RetentionInDays"], "%s: log retention in days", where)
				}
			}
			checkAlarms(t, stage+"/"+id, tmpl)
			jwt := map[string]bool{}
			for _, fn := range catalog.Functions() {
				for _, r := range fn.Routes {
					jwt[r.Key()] = jwt[r.Key()] || r.Auth == service.JWT
				}
			}
			for lid, r := range tmpl.Resources("AWS::ApiGatewayV2::Route") {
				key, _ := props(r)["RouteKey"].(string)
				want := "AWS_IAM"
				if jwt[key] {
					want = "JWT"
				}
				assert.Equal(t, want, props(r)["AuthorizationType"], "%s/%s %s: route %v authorization", stage, id, lid, key)
			}
			checkDynamoGrants(t, stage+"/"+id, tmpl)
		}
	}
	// five API functions and one stream consumer per stage
	assert.GreaterOrEqual(t, functions, 18, "functions in the app")
}

func checkDynamoGrants(t *testing.T, where string, tmpl map[string]any) {
	t.Helper()
	tables := map[string]bool{}
	res, _ := tmpl["Resources"].(map[string]any)
	for lid, r := range res {
		if r.(map[string]any)["Type"] == "AWS::DynamoDB::GlobalTable" {
			tables[lid] = true
		}
	}
	for lid, r := range res {
		if r.(map[string]any)["Type"] != "AWS::IAM::Policy" {
			continue
		}
		doc, _ := props(r.(map[string]any))["PolicyDocument"].(map[string]any)
		statements, _ := doc["Statement"].([]any)
		for _, s := range statements {
			st := s.(map[string]any)
			var dynamo []string
			for _, a := range policyjson.Strings(st["Action"]) {
				if strings.HasPrefix(a, "dynamodb:") {
					dynamo = append(dynamo, a)
					assert.NotContains(t, a, "*", "%s %s: wildcard action", where, lid)
				}
			}
			// ListStreams has no resource-level permission; CDK merges it
			// with other "*" statements (X-Ray).
			if len(dynamo) == 0 || (len(dynamo) == 1 && dynamo[0] == "dynamodb:ListStreams") {
				continue
			}
			raw, _ := json.Marshal(st["Resource"])
			for _, ref := range regexpGetAtt.FindAllStringSubmatch(string(raw), -1) {
				assert.True(t, tables[ref[1]], "%s %s: DynamoDB grant on %s, not a table of this stack", where, lid, ref[1])
			}
			assert.NotContains(t, string(raw), `"*"`, "%s %s: DynamoDB grant on a wildcard resource", where, lid)
			assert.NotContains(t, string(raw), "index/*", "%s %s: DynamoDB grant on a wildcard index", where, lid)
		}
	}
}

var regexpGetAtt = regexp.MustCompile(`"Fn::GetAtt":\["([A-Za-z0-9]+)","(?:Arn|StreamArn)"\]`)

// checkAlarms: every alarm notifies the stack's encrypted alarm topic (on
// ALARM and OK); every function has rate-based error and throttle alarms
// and a duration alarm at 80% of its timeout, every API a 5xx-rate alarm,
// every stream consumer an IteratorAge alarm, every table throttle and
// system-error alarms, every dead-letter queue a depth alarm.
func checkAlarms(t *testing.T, where string, tmpl cdkapp.Template) {
	t.Helper()
	topics := tmpl.Resources("AWS::SNS::Topic")
	watched := map[string]map[string]bool{} // logical id -> metric names
	for aid, a := range tmpl.Resources("AWS::CloudWatch::Alarm") {
		p := props(a)
		for _, key := range []string{"AlarmActions", "OKActions"} {
			actions, _ := p[key].([]any)
			assert.NotEmpty(t, actions, "%s %s: %s, want the stack's encrypted alarm topic", where, aid, key)
			for _, act := range actions {
				ref, _ := act.(map[string]any)
				topic, isTopic := topics[fmt.Sprint(ref["Ref"])]
				if assert.True(t, isTopic, "%s %s: %s %v, want the stack's encrypted alarm topic", where, aid, key, p[key]) {
					assert.NotNil(t, props(topic)["KmsMasterKeyId"], "%s %s: %s %v, want the stack's encrypted alarm topic", where, aid, key, p[key])
				}
			}
		}
		// A plain metric, or each metric of a metric math expression.
		metrics := []map[string]any{p}
		for _, m := range list(p["Metrics"]) {
			if stat, ok := m["MetricStat"].(map[string]any); ok {
				metrics = append(metrics, stat["Metric"].(map[string]any))
			}
		}
		for _, m := range metrics {
			name := fmt.Sprint(m["MetricName"])
			// Counting alarms on errors are what this replaces: an error
			// metric alone must sit in a rate expression.
			if m["MetricName"] != nil && p["Metrics"] == nil {
				assert.NotContains(t, []string{"Errors", "5xx"}, name, "%s %s: alarm on the %s count; use a rate (errors / requests)", where, aid, name)
			}
			for _, d := range list(m["Dimensions"]) {
				if ref, ok := d["Value"].(map[string]any); ok {
					target := fmt.Sprint(ref["Ref"])
					if ga, ok := ref["Fn::GetAtt"].([]any); ok { // a queue's QueueName
						target = fmt.Sprint(ga[0])
					}
					if watched[target] == nil {
						watched[target] = map[string]bool{}
					}
					watched[target][name] = true
				}
			}
		}
		if fmt.Sprint(p["MetricName"]) == "Duration" {
			fn := tmpl.Resources("AWS::Lambda::Function")[fmt.Sprint(list(p["Dimensions"])[0]["Value"].(map[string]any)["Ref"])]
			want := props(fn)["Timeout"].(float64) * 1000 * 0.8
			assert.Equal(t, want, p["Threshold"], "%s %s: duration alarm threshold in ms (80%% of the timeout)", where, aid)
			assert.Equal(t, "p99", p["ExtendedStatistic"], "%s %s: duration alarm statistic", where, aid)
		}
	}
	assert.NotEmpty(t, topics, "%s: no alarm topic", where)
	for tid, topic := range topics {
		assert.NotNil(t, props(topic)["KmsMasterKeyId"], "%s %s: topic without KMS encryption", where, tid)
		if alarmTopic(tid) {
			assert.True(t, hasTLSPolicy(tmpl, "AWS::SNS::TopicPolicy", "Topics", tid), "%s %s: no AWS::SNS::TopicPolicy denying requests without TLS", where, tid)
		}
	}
	if !strings.HasPrefix(where, "dev/") {
		assert.NotEmpty(t, tmpl.Resources("AWS::SNS::Subscription"), "%s: the alarm topic has no subscriber", where)
	}
	streamed := map[string]bool{}
	for _, m := range tmpl.Resources("AWS::Lambda::EventSourceMapping") {
		raw, _ := json.Marshal(props(m)["EventSourceArn"])
		if ref, ok := props(m)["FunctionName"].(map[string]any); ok && strings.Contains(string(raw), "StreamArn") {
			streamed[fmt.Sprint(ref["Ref"])] = true
		}
	}
	// Every dead-letter queue is watched: a message there is work nobody
	// will do without a person.
	for _, q := range tmpl.Resources("AWS::SQS::Queue") {
		rp, _ := props(q)["RedrivePolicy"].(map[string]any)
		if dlq, ok := rp["deadLetterTargetArn"].(map[string]any); ok {
			name := fmt.Sprint(dlq["Fn::GetAtt"].([]any)[0])
			assert.True(t, watched[name]["ApproximateNumberOfMessagesVisible"], "%s: dead-letter queue %s has no depth alarm", where, name)
		}
	}
	for lid := range tmpl.Resources("AWS::Lambda::Function") {
		for _, m := range []string{"Errors", "Invocations", "Throttles", "Duration"} {
			assert.True(t, watched[lid][m], "%s %s: no alarm on %s (%v)", where, lid, m, watched[lid])
		}
		if streamed[lid] {
			assert.True(t, watched[lid]["IteratorAge"], "%s %s: stream consumer without an IteratorAge alarm", where, lid)
		}
	}
	for lid := range tmpl.Resources("AWS::ApiGatewayV2::Api") {
		// A 5xx rate: the 5xx count over the request count.
		for _, m := range []string{"5xx", "Count"} {
			assert.True(t, watched[lid][m], "%s %s: API without a 5xx rate alarm: no %s metric (%v)", where, lid, m, watched[lid])
		}
	}
	for lid := range tmpl.Resources("AWS::DynamoDB::GlobalTable") {
		for _, m := range []string{"ReadThrottleEvents", "WriteThrottleEvents", "SystemErrors"} {
			assert.True(t, watched[lid][m], "%s %s: table without a %s alarm (%v)", where, lid, m, watched[lid])
		}
	}
}

// TestBlastRadius: in every stage, every function reserves its concurrency
// (and all stages together leave Lambda's unreserved floor in one
// account), every on-demand table and index caps its throughput, and the
// Stak routes that fan out have their own throttle.
func TestBlastRadius(t *testing.T) {
	reserved := 0
	for stage, stacks := range asm.Templates {
		for id, tmpl := range stacks {
			where := stage + "/" + id
			for lid, fn := range tmpl.Resources("AWS::Lambda::Function") {
				n, _ := props(fn)["ReservedConcurrentExecutions"].(float64)
				assert.GreaterOrEqual(t, n, 1.0, "%s %s: reserved concurrency", where, lid)
				reserved += int(n)
			}
			for lid, tbl := range tmpl.Resources("AWS::DynamoDB::GlobalTable") {
				p := props(tbl)
				if p["BillingMode"] != "PAY_PER_REQUEST" {
					continue
				}
				capped := func(what string, m map[string]any) {
					r, _ := m["ReadOnDemandThroughputSettings"].(map[string]any)
					w, _ := m["WriteOnDemandThroughputSettings"].(map[string]any)
					assert.NotNil(t, r["MaxReadRequestUnits"], "%s %s: %s has no on-demand read cap (%v)", where, lid, what, r)
					assert.NotNil(t, w["MaxWriteRequestUnits"], "%s %s: %s has no on-demand write cap (%v)", where, lid, what, w)
				}
				// The write cap sits on the table, the read cap on each
				// replica (a GlobalTable's read settings are per region).
				for _, rep := range list(p["Replicas"]) {
					capped("replica", map[string]any{"ReadOnDemandThroughputSettings": rep["ReadOnDemandThroughputSettings"], "WriteOnDemandThroughputSettings": p["WriteOnDemandThroughputSettings"]})
				}
				for _, ix := range list(p["GlobalSecondaryIndexes"]) {
					assert.NotNil(t, ix["WriteOnDemandThroughputSettings"], "%s %s: index %v has no write cap", where, lid, ix["IndexName"])
				}
			}
			if id != "stak" {
				continue
			}
			settings := map[string]any{}
			for _, st := range tmpl.Resources("AWS::ApiGatewayV2::Stage") {
				settings, _ = props(st)["RouteSettings"].(map[string]any)
			}
			for _, route := range []string{"POST /tenants/{tenant}/inboxes/{inbox}/messages", "POST /tenants/{tenant}/inboxes/{inbox}/users/{uid}/read-all"} {
				s, _ := settings[route].(map[string]any)
				// A rate of its own: 1-10/s.
				rate, _ := s["ThrottlingRateLimit"].(float64)
				assert.GreaterOrEqual(t, rate, 1.0, "%s: route %s throttle %v", where, route, s)
				assert.LessOrEqual(t, rate, 10.0, "%s: route %s throttle %v", where, route, s)
			}
		}
	}
	assert.LessOrEqual(t, reserved, 900, "concurrent executions the stages reserve; one account at Lambda's default quota allows 900")

}

// alarmTopic: the stack's alarm topic (construct id Alarms, wireAlarms).
func alarmTopic(logicalID string) bool {
	return regexp.MustCompile(`^Alarms[0-9A-F]{8}$`).MatchString(logicalID)
}
