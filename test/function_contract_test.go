package test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

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
				if p["Runtime"] != "provided.al2023" || fmt.Sprint(p["Architectures"]) != "[arm64]" || p["Handler"] != "bootstrap" {
					t.Errorf("%s: runtime %v %v %v, want provided.al2023 arm64 bootstrap", where, p["Runtime"], p["Architectures"], p["Handler"])
				}
				if tc, _ := p["TracingConfig"].(map[string]any); tc["Mode"] != "Active" {
					t.Errorf("%s: tracing %v, want Active", where, p["TracingConfig"])
				}
				lc, _ := p["LoggingConfig"].(map[string]any)
				ref, _ := lc["LogGroup"].(map[string]any)
				lg, ok := logGroups[fmt.Sprint(ref["Ref"])]
				if !ok {
					t.Errorf("%s: no log group of its own (LoggingConfig %v)", where, p["LoggingConfig"])
				} else if got := props(lg)["RetentionInDays"]; got != retention[stage] {
					t.Errorf("%s: log retention %v days, want %v", where, got, retention[stage])
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
				if props(r)["AuthorizationType"] != want {
					t.Errorf("%s/%s %s: route %v is %v-authorized, want %s", stage, id, lid, key, props(r)["AuthorizationType"], want)
				}
			}
			checkDynamoGrants(t, stage+"/"+id, tmpl)
		}
	}
	if functions < 18 { // five API functions and one stream consumer per stage
		t.Errorf("%d functions in the app, want at least 18", functions)
	}
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
					if strings.Contains(a, "*") {
						t.Errorf("%s %s: wildcard action %s", where, lid, a)
					}
				}
			}
			// ListStreams has no resource-level permission; CDK merges it
			// with other "*" statements (X-Ray).
			if len(dynamo) == 0 || (len(dynamo) == 1 && dynamo[0] == "dynamodb:ListStreams") {
				continue
			}
			raw, _ := json.Marshal(st["Resource"])
			for _, ref := range regexpGetAtt.FindAllStringSubmatch(string(raw), -1) {
				if !tables[ref[1]] {
					t.Errorf("%s %s: DynamoDB grant on %s, not a table of this stack", where, lid, ref[1])
				}
			}
			if strings.Contains(string(raw), `"*"`) || strings.Contains(string(raw), "index/*") {
				t.Errorf("%s %s: DynamoDB grant on a wildcard resource: %s", where, lid, raw)
			}
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
			ok := len(actions) > 0
			for _, act := range actions {
				ref, _ := act.(map[string]any)
				topic, isTopic := topics[fmt.Sprint(ref["Ref"])]
				if !isTopic || props(topic)["KmsMasterKeyId"] == nil {
					ok = false
				}
			}
			if !ok {
				t.Errorf("%s %s: %s %v, want the stack's encrypted alarm topic", where, aid, key, p[key])
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
			if m["MetricName"] != nil && (name == "Errors" || name == "5xx") && p["Metrics"] == nil {
				t.Errorf("%s %s: alarm on the %s count; use a rate (errors / requests)", where, aid, name)
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
			if want := props(fn)["Timeout"].(float64) * 1000 * 0.8; p["Threshold"] != want || p["ExtendedStatistic"] != "p99" {
				t.Errorf("%s %s: duration alarm %v %v, want p99 at %v ms (80%% of the timeout)", where, aid, p["ExtendedStatistic"], p["Threshold"], want)
			}
		}
	}
	if len(topics) == 0 {
		t.Errorf("%s: no alarm topic", where)
	}
	for tid, topic := range topics {
		if props(topic)["KmsMasterKeyId"] == nil {
			t.Errorf("%s %s: topic without KMS encryption", where, tid)
		}
		if alarmTopic(tid) {
			requireTLSPolicy(t, where, tmpl, "AWS::SNS::TopicPolicy", "Topics", tid)
		}
	}
	if !strings.HasPrefix(where, "dev/") && len(tmpl.Resources("AWS::SNS::Subscription")) == 0 {
		t.Errorf("%s: the alarm topic has no subscriber", where)
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
			if !watched[name]["ApproximateNumberOfMessagesVisible"] {
				t.Errorf("%s: dead-letter queue %s has no depth alarm", where, name)
			}
		}
	}
	for lid := range tmpl.Resources("AWS::Lambda::Function") {
		for _, m := range []string{"Errors", "Invocations", "Throttles", "Duration"} {
			if !watched[lid][m] {
				t.Errorf("%s %s: no alarm on %s (%v)", where, lid, m, watched[lid])
			}
		}
		if streamed[lid] && !watched[lid]["IteratorAge"] {
			t.Errorf("%s %s: stream consumer without an IteratorAge alarm", where, lid)
		}
	}
	for lid := range tmpl.Resources("AWS::ApiGatewayV2::Api") {
		if !watched[lid]["5xx"] || !watched[lid]["Count"] {
			t.Errorf("%s %s: API without a 5xx rate alarm (%v)", where, lid, watched[lid])
		}
	}
	for lid := range tmpl.Resources("AWS::DynamoDB::GlobalTable") {
		for _, m := range []string{"ReadThrottleEvents", "WriteThrottleEvents", "SystemErrors"} {
			if !watched[lid][m] {
				t.Errorf("%s %s: table without a %s alarm (%v)", where, lid, m, watched[lid])
			}
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
				if n < 1 {
					t.Errorf("%s %s: no reserved concurrency", where, lid)
				}
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
					if r["MaxReadRequestUnits"] == nil || w["MaxWriteRequestUnits"] == nil {
						t.Errorf("%s %s: %s has no on-demand cap (read %v, write %v)", where, lid, what, r, w)
					}
				}
				// The write cap sits on the table, the read cap on each
				// replica (a GlobalTable's read settings are per region).
				for _, rep := range list(p["Replicas"]) {
					capped("replica", map[string]any{"ReadOnDemandThroughputSettings": rep["ReadOnDemandThroughputSettings"], "WriteOnDemandThroughputSettings": p["WriteOnDemandThroughputSettings"]})
				}
				for _, ix := range list(p["GlobalSecondaryIndexes"]) {
					if ix["WriteOnDemandThroughputSettings"] == nil {
						t.Errorf("%s %s: index %v has no write cap", where, lid, ix["IndexName"])
					}
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
				if rate, _ := s["ThrottlingRateLimit"].(float64); rate < 1 || rate > 10 {
					t.Errorf("%s: route %s throttle %v, want a rate of its own (1-10/s)", where, route, s)
				}
			}
		}
	}
	if reserved > 900 {
		t.Errorf("the stages reserve %d concurrent executions; one account at Lambda's default quota allows 900", reserved)
	}
}

// alarmTopic: the stack's alarm topic (construct id Alarms, wireAlarms).
func alarmTopic(logicalID string) bool {
	return regexp.MustCompile(`^Alarms[0-9A-F]{8}$`).MatchString(logicalID)
}
