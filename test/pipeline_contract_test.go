package test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/policyjson"
	"github.com/dynastack/dynastack/constructs/service"

	"github.com/dynastack/dynastack/infra/config"
)

// rez_agent's pipeline as issue 7 asks for it, in every stage: the
// schedule (expression and zone from config, a role that may invoke only
// the scheduler), SNS → SQS encrypted and TLS-only, the queue's visibility
// and redrive from config, the processor's mapping, IAM per function, the
// DLQ alarm, and no secret in any environment.
func TestRezAgentPipelineContract(t *testing.T) {
	for _, cfg := range config.Stages() {
		stage := string(cfg.Name)
		tmpl := asm.Templates[stage]["rezagent"]
		want := cfg.RezAgent.WithDefaults(stage)
		where := stage + "/rezagent"
		fns := map[string]string{} // DYNASTACK_SERVICE → logical id
		timeout := map[string]float64{}
		for lid, fn := range tmpl.Resources("AWS::Lambda::Function") {
			env, _ := props(fn)["Environment"].(map[string]any)
			vars, _ := env["Variables"].(map[string]any)
			fns[fmt.Sprint(vars["DYNASTACK_SERVICE"])] = lid
			timeout[lid], _ = props(fn)["Timeout"].(float64)
			for k, v := range vars {
				if s, ok := v.(string); ok && (strings.HasPrefix(s, "tk_") || strings.Contains(strings.ToLower(k), "token") && k != "NTFY_TOKEN_PARAMETER") {
					t.Errorf("%s %s: %s=%q looks like a secret in the template", where, lid, k, s)
				}
			}
			if vars["DYNASTACK_SERVICE"] == "rezagent-processor" && (vars["NTFY_URL"] != want.NtfyURL || vars["NTFY_TOPIC"] != want.NtfyTopic ||
				vars["REZ_AGENT_MAX_RECEIVE_COUNT"] != fmt.Sprint(want.MaxReceiveCount)) {
				t.Errorf("%s: processor environment %v, want ntfy %s/%s and max receive count %d", where, vars, want.NtfyURL, want.NtfyTopic, want.MaxReceiveCount)
			}
		}
		scheduler, processor, api := fns["rezagent-scheduler"], fns["rezagent-processor"], fns["rezagent"]
		if scheduler == "" || processor == "" || api == "" {
			t.Fatalf("%s: functions %v, want rezagent, rezagent-scheduler and rezagent-processor", where, fns)
		}

		schedules := tmpl.Resources("AWS::Scheduler::Schedule")
		if len(schedules) != 1 {
			t.Fatalf("%s: %d schedules, want 1", where, len(schedules))
		}
		var roleRef string
		for lid, s := range schedules {
			p := props(s)
			target, _ := p["Target"].(map[string]any)
			arn, _ := json.Marshal(target["Arn"])
			if p["ScheduleExpression"] != want.Schedule.Expression || p["ScheduleExpressionTimezone"] != want.Schedule.Zone() ||
				string(arn) != `{"Fn::GetAtt":["`+scheduler+`","Arn"]}` || target["Input"] != service.ScheduleInput {
				t.Errorf("%s %s: schedule %v, want %s in %s invoking %s with the context-attribute input", where, lid, p, want.Schedule.Expression, want.Schedule.Zone(), scheduler)
			}
			role, _ := target["RoleArn"].(map[string]any)
			roleRef = fmt.Sprint(role["Fn::GetAtt"].([]any)[0])
			if rp, _ := target["RetryPolicy"].(map[string]any); rp == nil {
				t.Errorf("%s %s: schedule without a retry policy", where, lid)
			}
			if dl, _ := target["DeadLetterConfig"].(map[string]any); dl == nil {
				t.Errorf("%s %s: schedule without a dead-letter queue", where, lid)
			}
		}
		checkScheduleRole(t, where, tmpl, roleRef, scheduler)

		topics := tmpl.Resources("AWS::SNS::Topic")
		for lid, tp := range topics {
			if alarmTopic(lid) {
				continue // checkAlarms covers the alarm topic
			}
			if key, _ := json.Marshal(props(tp)["KmsMasterKeyId"]); !strings.Contains(string(key), ":alias/aws/sns") {
				t.Errorf("%s %s: topic not encrypted with the AWS-managed key: %v", where, lid, props(tp))
			}
			requireTLSPolicy(t, where, tmpl, "AWS::SNS::TopicPolicy", "Topics", lid)
		}
		queues := tmpl.Resources("AWS::SQS::Queue")
		var mainQueue string
		for lid, q := range queues {
			p := props(q)
			if p["SqsManagedSseEnabled"] != true {
				t.Errorf("%s %s: queue without SSE", where, lid)
			}
			requireTLSPolicy(t, where, tmpl, "AWS::SQS::QueuePolicy", "Queues", lid)
			if rp, ok := p["RedrivePolicy"].(map[string]any); ok {
				mainQueue = lid
				if rp["maxReceiveCount"] != float64(want.MaxReceiveCount) {
					t.Errorf("%s %s: maxReceiveCount %v, want %d", where, lid, rp["maxReceiveCount"], want.MaxReceiveCount)
				}
				if vt, _ := p["VisibilityTimeout"].(float64); vt < 6*timeout[processor] {
					t.Errorf("%s %s: visibility timeout %v s < 6 × the processor's %v s", where, lid, vt, timeout[processor])
				}
			}
		}
		for lid, sub := range tmpl.Resources("AWS::SNS::Subscription") {
			p := props(sub)
			if ref, _ := p["TopicArn"].(map[string]any); alarmTopic(fmt.Sprint(ref["Ref"])) {
				continue
			}
			if p["Protocol"] != "sqs" || p["RawMessageDelivery"] != true || p["RedrivePolicy"] == nil {
				t.Errorf("%s %s: subscription %v, want raw sqs delivery with a redrive policy", where, lid, p)
			}
		}
		mappings := tmpl.Resources("AWS::Lambda::EventSourceMapping")
		if len(mappings) != 1 {
			t.Fatalf("%s: %d event source mappings, want 1", where, len(mappings))
		}
		for lid, m := range mappings {
			p := props(m)
			src, _ := json.Marshal(p["EventSourceArn"])
			sc, _ := p["ScalingConfig"].(map[string]any)
			if fmt.Sprint(p["FunctionResponseTypes"]) != "[ReportBatchItemFailures]" || p["BatchSize"] != float64(want.BatchSize) ||
				sc["MaximumConcurrency"] != float64(want.MaxConcurrency) || string(src) != `{"Fn::GetAtt":["`+mainQueue+`","Arn"]}` {
				t.Errorf("%s %s: mapping %v, want %s with ReportBatchItemFailures, batch %d, concurrency %d", where, lid, p, mainQueue, want.BatchSize, want.MaxConcurrency)
			}
		}

		// Who may do what, by function role.
		actions := policyActions(tmpl)
		for fn, wantSNS := range map[string]bool{api: true, scheduler: true, processor: false} {
			role := roleOf(tmpl, fn)
			got := actions[role]
			if has := got["sns:Publish"] != ""; has != wantSNS {
				t.Errorf("%s %s: sns:Publish granted %v, want %v", where, fn, has, wantSNS)
			}
			for a, res := range got {
				if strings.HasPrefix(a, "sns:") && (a != "sns:Publish" || !strings.Contains(res, `"Ref":"`) || strings.Contains(res, "*")) {
					t.Errorf("%s %s: %s on %s, want sns:Publish on the topic only", where, fn, a, res)
				}
				if strings.HasPrefix(a, "sqs:") && fn == processor && !strings.Contains(res, mainQueue) {
					t.Errorf("%s %s: %s on %s, want the notifications queue only", where, fn, a, res)
				}
				if strings.HasPrefix(a, "kms:") {
					t.Errorf("%s %s: %s on %s: the AWS-managed keys need no IAM grant", where, fn, a, res)
				}
			}
		}
		for _, a := range []string{"dynamodb:Scan", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:PutItem", "dynamodb:Query"} {
			if actions[roleOf(tmpl, processor)][a] != "" {
				t.Errorf("%s processor: %s granted; it only gets and updates items", where, a)
			}
		}
		for _, a := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"} {
			if actions[roleOf(tmpl, processor)][a] == "" {
				t.Errorf("%s processor: %s missing", where, a)
			}
		}
	}
}

// policyActions maps each role (logical id) to action → resources (JSON).
func policyActions(tmpl map[string]any) map[string]map[string]string {
	out := map[string]map[string]string{}
	res, _ := tmpl["Resources"].(map[string]any)
	for _, r := range res {
		rm := r.(map[string]any)
		if rm["Type"] != "AWS::IAM::Policy" {
			continue
		}
		p := props(rm)
		doc, _ := p["PolicyDocument"].(map[string]any)
		for _, role := range list(p["Roles"]) {
			name := fmt.Sprint(role["Ref"])
			if out[name] == nil {
				out[name] = map[string]string{}
			}
			for _, s := range doc["Statement"].([]any) {
				st := s.(map[string]any)
				raw, _ := json.Marshal(st["Resource"])
				for _, a := range policyjson.Strings(st["Action"]) {
					out[name][a] += string(raw)
				}
			}
		}
	}
	return out
}

func roleOf(tmpl map[string]any, fn string) string {
	res, _ := tmpl["Resources"].(map[string]any)
	role, _ := props(res[fn].(map[string]any))["Role"].(map[string]any)
	return fmt.Sprint(role["Fn::GetAtt"].([]any)[0])
}

// checkScheduleRole: trusted by EventBridge Scheduler of this account
// only, allowed lambda:InvokeFunction on the scheduler function only (and
// sqs:SendMessage on the schedule's own dead-letter queue).
func checkScheduleRole(t *testing.T, where string, tmpl map[string]any, role, fn string) {
	t.Helper()
	res, _ := tmpl["Resources"].(map[string]any)
	r, _ := res[role].(map[string]any)
	trust, _ := json.Marshal(props(r)["AssumeRolePolicyDocument"])
	if !strings.Contains(string(trust), `"Service":"scheduler.amazonaws.com"`) || !strings.Contains(string(trust), `"aws:SourceAccount"`) {
		t.Errorf("%s %s: trust %s, want scheduler.amazonaws.com of this account", where, role, trust)
	}
	for a, resources := range policyActions(tmpl)[role] {
		if a == "sqs:SendMessage" && strings.Count(resources, "Failures") == 1 && strings.Count(resources, "Fn::GetAtt") == 1 {
			continue
		}
		if a != "lambda:InvokeFunction" || strings.Count(resources, `"Fn::GetAtt":["`+fn+`","Arn"]`) != strings.Count(resources, "Fn::GetAtt") {
			t.Errorf("%s %s: %s on %s, want lambda:InvokeFunction on %s only", where, role, a, resources, fn)
		}
	}
}

// requireTLSPolicy: a policy of policyType on the resource denies any
// request without TLS.
func requireTLSPolicy(t *testing.T, where string, tmpl map[string]any, policyType, prop, lid string) {
	t.Helper()
	res, _ := tmpl["Resources"].(map[string]any)
	for _, r := range res {
		rm := r.(map[string]any)
		if rm["Type"] != policyType {
			continue
		}
		p := props(rm)
		on, _ := json.Marshal(p[prop])
		doc, _ := json.Marshal(p["PolicyDocument"])
		if strings.Contains(string(on), `"`+lid+`"`) && strings.Contains(string(doc), `"aws:SecureTransport":"false"`) && strings.Contains(string(doc), `"Effect":"Deny"`) {
			return
		}
	}
	t.Errorf("%s %s: no %s denying requests without TLS", where, lid, policyType)
}
