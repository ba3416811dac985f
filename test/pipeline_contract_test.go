package test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
				if s, ok := v.(string); ok {
					assert.False(t, strings.HasPrefix(s, "tk_"), "%s %s: %s=%q looks like a secret in the template", where, lid, k, s)
					if k != "NTFY_TOKEN_PARAMETER" {
						assert.NotContains(t, strings.ToLower(k), "token", "%s %s: %s=%q looks like a secret in the template", where, lid, k, s)
					}
				}
			}
			if vars["DYNASTACK_SERVICE"] == "rezagent-processor" {
				assert.Equal(t, want.NtfyURL, vars["NTFY_URL"], "%s: processor environment: ntfy server", where)
				assert.Equal(t, want.NtfyTopic, vars["NTFY_TOPIC"], "%s: processor environment: ntfy topic", where)
				assert.Equal(t, fmt.Sprint(want.MaxReceiveCount), vars["REZ_AGENT_MAX_RECEIVE_COUNT"], "%s: processor environment: max receive count", where)
			}
		}
		scheduler, processor, api := fns["rezagent-scheduler"], fns["rezagent-processor"], fns["rezagent"]
		require.NotEmpty(t, scheduler, "%s: functions %v, want rezagent-scheduler", where, fns)
		require.NotEmpty(t, processor, "%s: functions %v, want rezagent-processor", where, fns)
		require.NotEmpty(t, api, "%s: functions %v, want rezagent", where, fns)

		schedules := tmpl.Resources("AWS::Scheduler::Schedule")
		require.Len(t, schedules, 1, "%s: schedules", where)
		var roleRef string
		for lid, s := range schedules {
			p := props(s)
			target, _ := p["Target"].(map[string]any)
			arn, _ := json.Marshal(target["Arn"])
			assert.Equal(t, want.Schedule.Expression, p["ScheduleExpression"], "%s %s: schedule expression", where, lid)
			assert.Equal(t, want.Schedule.Zone(), p["ScheduleExpressionTimezone"], "%s %s: schedule time zone", where, lid)
			assert.Equal(t, scheduler, aliasFunction(tmpl, target["Arn"]), "%s %s: schedule target %s (the scheduler function's live alias)", where, lid, arn)
			assert.Equal(t, service.ScheduleInput, target["Input"], "%s %s: schedule input (the context attributes)", where, lid)
			role, _ := target["RoleArn"].(map[string]any)
			roleRef = fmt.Sprint(role["Fn::GetAtt"].([]any)[0])
			rp, _ := target["RetryPolicy"].(map[string]any)
			assert.NotNil(t, rp, "%s %s: schedule without a retry policy", where, lid)
			dl, _ := target["DeadLetterConfig"].(map[string]any)
			assert.NotNil(t, dl, "%s %s: schedule without a dead-letter queue", where, lid)
		}
		checkScheduleRole(t, where, tmpl, roleRef, scheduler)

		topics := tmpl.Resources("AWS::SNS::Topic")
		for lid, tp := range topics {
			if alarmTopic(lid) {
				continue // checkAlarms covers the alarm topic
			}
			key, _ := json.Marshal(props(tp)["KmsMasterKeyId"])
			assert.Contains(t, string(key), ":alias/aws/sns", "%s %s: topic not encrypted with the AWS-managed key: %v", where, lid, props(tp))
			assert.True(t, hasTLSPolicy(tmpl, "AWS::SNS::TopicPolicy", "Topics", lid), "%s %s: no AWS::SNS::TopicPolicy denying requests without TLS", where, lid)
		}
		queues := tmpl.Resources("AWS::SQS::Queue")
		var mainQueue string
		for lid, q := range queues {
			p := props(q)
			assert.Equal(t, true, p["SqsManagedSseEnabled"], "%s %s: queue without SSE", where, lid)
			assert.True(t, hasTLSPolicy(tmpl, "AWS::SQS::QueuePolicy", "Queues", lid), "%s %s: no AWS::SQS::QueuePolicy denying requests without TLS", where, lid)
			if rp, ok := p["RedrivePolicy"].(map[string]any); ok {
				mainQueue = lid
				assert.Equal(t, float64(want.MaxReceiveCount), rp["maxReceiveCount"], "%s %s: maxReceiveCount", where, lid)
				vt, _ := p["VisibilityTimeout"].(float64)
				assert.GreaterOrEqual(t, vt, 6*timeout[processor], "%s %s: visibility timeout in s, at least 6 × the processor's %v s", where, lid, timeout[processor])
			}
		}
		for lid, sub := range tmpl.Resources("AWS::SNS::Subscription") {
			p := props(sub)
			if ref, _ := p["TopicArn"].(map[string]any); alarmTopic(fmt.Sprint(ref["Ref"])) {
				continue
			}
			// Raw sqs delivery with a redrive policy.
			assert.Equal(t, "sqs", p["Protocol"], "%s %s: subscription protocol", where, lid)
			assert.Equal(t, true, p["RawMessageDelivery"], "%s %s: subscription raw delivery", where, lid)
			assert.NotNil(t, p["RedrivePolicy"], "%s %s: subscription without a redrive policy", where, lid)
		}
		mappings := tmpl.Resources("AWS::Lambda::EventSourceMapping")
		require.Len(t, mappings, 1, "%s: event source mappings", where)
		for lid, m := range mappings {
			p := props(m)
			src, _ := json.Marshal(p["EventSourceArn"])
			sc, _ := p["ScalingConfig"].(map[string]any)
			assert.Equal(t, "[ReportBatchItemFailures]", fmt.Sprint(p["FunctionResponseTypes"]), "%s %s: mapping response types", where, lid)
			assert.Equal(t, float64(want.BatchSize), p["BatchSize"], "%s %s: mapping batch size", where, lid)
			assert.Equal(t, float64(want.MaxConcurrency), sc["MaximumConcurrency"], "%s %s: mapping maximum concurrency", where, lid)
			assert.Equal(t, `{"Fn::GetAtt":["`+mainQueue+`","Arn"]}`, string(src), "%s %s: mapping source (the notifications queue)", where, lid)
		}

		// Who may do what, by function role.
		actions := policyActions(tmpl)
		for fn, wantSNS := range map[string]bool{api: true, scheduler: true, processor: false} {
			role := roleOf(tmpl, fn)
			got := actions[role]
			assert.Equal(t, wantSNS, got["sns:Publish"] != "", "%s %s: sns:Publish granted", where, fn)
			for a, res := range got {
				if strings.HasPrefix(a, "sns:") {
					// sns:Publish on the topic only.
					assert.Equal(t, "sns:Publish", a, "%s %s: %s on %s", where, fn, a, res)
					assert.Contains(t, res, `"Ref":"`, "%s %s: %s, want it on the topic only", where, fn, a)
					assert.NotContains(t, res, "*", "%s %s: %s, want it on the topic only", where, fn, a)
				}
				if strings.HasPrefix(a, "sqs:") && fn == processor {
					assert.Contains(t, res, mainQueue, "%s %s: %s, want the notifications queue only", where, fn, a)
				}
				assert.False(t, strings.HasPrefix(a, "kms:"), "%s %s: %s on %s: the AWS-managed keys need no IAM grant", where, fn, a, res)
			}
		}
		for _, a := range []string{"dynamodb:Scan", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:PutItem", "dynamodb:Query"} {
			assert.Empty(t, actions[roleOf(tmpl, processor)][a], "%s processor: %s granted; it only gets and updates items", where, a)
		}
		for _, a := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"} {
			assert.NotEmpty(t, actions[roleOf(tmpl, processor)][a], "%s processor: %s missing", where, a)
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
	// scheduler.amazonaws.com of this account.
	assert.Contains(t, string(trust), `"Service":"scheduler.amazonaws.com"`, "%s %s: trust", where, role)
	assert.Contains(t, string(trust), `"aws:SourceAccount"`, "%s %s: trust", where, role)
	for a, resources := range policyActions(tmpl)[role] {
		if a == "sqs:SendMessage" && strings.Count(resources, "Failures") == 1 && strings.Count(resources, "Fn::GetAtt") == 1 {
			continue
		}
		// lambda:InvokeFunction on fn only.
		assert.Equal(t, "lambda:InvokeFunction", a, "%s %s: %s on %s, want lambda:InvokeFunction on %s only", where, role, a, resources, fn)
		assert.Equal(t, strings.Count(resources, "Fn::GetAtt"), strings.Count(resources, `"Fn::GetAtt":["`+fn+`","Arn"]`), "%s %s: %s on %s, want it on %s only", where, role, a, resources, fn)
	}
}

// hasTLSPolicy: a policy of policyType on the resource denies any request
// without TLS.
func hasTLSPolicy(tmpl map[string]any, policyType, prop, lid string) bool {
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
			return true
		}
	}
	return false
}
