package test

import (
	"encoding/json"
	"fmt"
	infrastacks "github.com/dynastack/dynastack/infra/stacks"
	"github.com/dynastack/dynastack/test/cdkapp"
	"regexp"
	"strings"
	"testing"
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
			if id == "stak" {
				for _, r := range infrastacks.StakUserRoutes {
					jwt[string(r)] = true
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
			for _, a := range asList(st["Action"]) {
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

func asList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

var regexpGetAtt = regexp.MustCompile(`"Fn::GetAtt":\["([A-Za-z0-9]+)","(?:Arn|StreamArn)"\]`)

// checkAlarms: every function has an Errors alarm, every API a 5xx alarm,
// every stream consumer an IteratorAge alarm.
func checkAlarms(t *testing.T, where string, tmpl cdkapp.Template) {
	t.Helper()
	watched := map[string]map[string]bool{} // logical id -> metric names
	for _, a := range tmpl.Resources("AWS::CloudWatch::Alarm") {
		p := props(a)
		for _, d := range list(p["Dimensions"]) {
			if ref, ok := d["Value"].(map[string]any); ok {
				target := fmt.Sprint(ref["Ref"])
				if ga, ok := ref["Fn::GetAtt"].([]any); ok { // a queue's QueueName
					target = fmt.Sprint(ga[0])
				}
				if watched[target] == nil {
					watched[target] = map[string]bool{}
				}
				watched[target][fmt.Sprint(p["MetricName"])] = true
			}
		}
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
		if !watched[lid]["Errors"] || !watched[lid]["Throttles"] {
			t.Errorf("%s %s: no Errors/Throttles alarm (%v)", where, lid, watched[lid])
		}
		if streamed[lid] && !watched[lid]["IteratorAge"] {
			t.Errorf("%s %s: stream consumer without an IteratorAge alarm", where, lid)
		}
	}
	for lid := range tmpl.Resources("AWS::ApiGatewayV2::Api") {
		if !watched[lid]["5xx"] {
			t.Errorf("%s %s: API without a 5xx alarm (%v)", where, lid, watched[lid])
		}
	}
}
