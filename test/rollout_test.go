package test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/test/cdkapp"
)

// liveAliases maps each function of tmpl (logical id) to its live alias
// (logical id), checking the alias: named config.LiveAlias, of that
// function, at a version of that function.
func liveAliases(t *testing.T, where string, tmpl cdkapp.Template) map[string]string {
	t.Helper()
	versions := tmpl.Resources("AWS::Lambda::Version")
	out := map[string]string{}
	for id, a := range tmpl.Resources("AWS::Lambda::Alias") {
		p := props(a)
		assert.Equal(t, config.LiveAlias, p["Name"], "%s alias %s", where, id)
		fn := refOf(p["FunctionName"])
		require.NotEmpty(t, fn, "%s alias %s names its function by Ref", where, id)
		v, ok := p["FunctionVersion"].(map[string]any)["Fn::GetAtt"].([]any)
		require.True(t, ok && len(v) == 2, "%s alias %s: FunctionVersion %v", where, id, p["FunctionVersion"])
		version, ok := versions[fmt.Sprint(v[0])]
		require.True(t, ok, "%s alias %s points at %v, not a version of the stack", where, id, v[0])
		assert.Equal(t, fn, refOf(props(version)["FunctionName"]), "%s alias %s: its version is of its function", where, id)
		_, dup := out[fn]
		assert.False(t, dup, "%s: function %s has two aliases", where, fn)
		out[fn] = id
	}
	for fn := range tmpl.Resources("AWS::Lambda::Function") {
		assert.Contains(t, out, fn, "%s: function %s has no live alias", where, fn)
	}
	return out
}

// aliasRef is the logical id of the resource an invoker's reference
// names: {"Ref": id}, or the pieces of its ARN CDK takes for a qualified
// name, {"Fn::Join": ["", [{"Fn::Select": [6, {"Fn::Split": [":",
// {"Ref": id}]}]}, ":live"]]} (an event source mapping's
// <function>:<alias>) and {"Fn::Select": [n, {"Fn::Split": [":", {"Ref":
// id}]}]}.
func aliasRef(v any) string {
	if r := refOf(v); r != "" {
		return r
	}
	m, _ := v.(map[string]any)
	if j, ok := m["Fn::Join"].([]any); ok && len(j) == 2 {
		parts, _ := j[1].([]any)
		if len(parts) == 2 && parts[1] == ":"+config.LiveAlias {
			return aliasRef(parts[0])
		}
	}
	if sel, ok := m["Fn::Select"].([]any); ok && len(sel) == 2 {
		split, _ := sel[1].(map[string]any)["Fn::Split"].([]any)
		if len(split) == 2 && split[0] == ":" {
			return aliasRef(split[1])
		}
	}
	return ""
}

// aliasFunction is the logical id of the function whose live alias v
// names, "" when v names no alias.
func aliasFunction(tmpl cdkapp.Template, v any) string {
	a, ok := tmpl.Resources("AWS::Lambda::Alias")[aliasRef(v)]
	if !ok {
		return ""
	}
	return refOf(props(a)["FunctionName"])
}

func refOf(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["Ref"].(string)
	return s
}

// TestEveryFunctionBehindItsLiveAlias: in every stage, every function is
// published as a version behind its live alias, and everything that
// invokes a function invokes the alias: the API integrations and their
// invoke permissions, the queue and stream mappings, the schedules and
// their async configuration; an IAM grant of lambda:InvokeFunction names
// the alias's ARN (…:function:<name>:live) and never the bare function.
func TestEveryFunctionBehindItsLiveAlias(t *testing.T) {
	checked := map[string]int{}
	for stage, stacks := range asm.Templates {
		for id, tmpl := range stacks {
			where := stage + "/" + id
			aliases := liveAliases(t, where, tmpl)
			isAlias := map[string]bool{}
			for _, a := range aliases {
				isAlias[a] = true
			}
			invokes := func(kind, rid string, v any) {
				checked[kind]++
				assert.True(t, isAlias[aliasRef(v)], "%s %s %s invokes %v, not a live alias", where, kind, rid, v)
			}
			for rid, r := range tmpl.Resources("AWS::ApiGatewayV2::Integration") {
				invokes("integration", rid, props(r)["IntegrationUri"])
			}
			for rid, r := range tmpl.Resources("AWS::Lambda::Permission") {
				invokes("permission", rid, props(r)["FunctionName"])
			}
			for rid, r := range tmpl.Resources("AWS::Lambda::EventSourceMapping") {
				invokes("mapping", rid, props(r)["FunctionName"])
			}
			for rid, r := range tmpl.Resources("AWS::Scheduler::Schedule") {
				target, _ := props(r)["Target"].(map[string]any)
				invokes("schedule", rid, target["Arn"])
			}
			for rid, r := range tmpl.Resources("AWS::Lambda::EventInvokeConfig") {
				p := props(r)
				// {"Fn::Select": [7, {"Fn::Split": [":", {"Ref": <alias>}]}]}:
				// the alias's name, from its ARN.
				assert.Equal(t, aliases[refOf(p["FunctionName"])], aliasRef(p["Qualifier"]), "%s %s: the async configuration of what the schedule invokes is the alias's", where, rid)
			}
			for rid, r := range tmpl.Resources("AWS::IAM::Policy") {
				doc, _ := props(r)["PolicyDocument"].(map[string]any)
				stmts, _ := doc["Statement"].([]any)
				for _, s := range stmts {
					st, _ := s.(map[string]any)
					if !strings.Contains(fmt.Sprint(st["Action"]), "lambda:InvokeFunction") {
						continue
					}
					resources, ok := st["Resource"].([]any)
					if !ok {
						resources = []any{st["Resource"]}
					}
					for _, res := range resources {
						arn := aliasARN(tmpl, res)
						checked["grant"]++
						assert.Regexp(t, `^arn:aws:lambda:[a-z0-9-]+:\d{12}:function:[^:]+:live(:\*)?$`, arn, "%s policy %s grants lambda:InvokeFunction on %v", where, rid, res)
						if strings.HasSuffix(arn, ":*") {
							// CDK adds <ARN>:* beside the ARN: on the alias's
							// ARN it matches no other function or version.
							assert.True(t, strings.HasSuffix(arn, ":live:*"), "%s policy %s: %s", where, rid, arn)
						}
					}
				}
			}
		}
	}
	for _, kind := range []string{"integration", "permission", "mapping", "schedule", "grant"} {
		assert.Positive(t, checked[kind], "%ss checked", kind)
	}
}

// aliasARN resolves a policy's resource as the deployed ARN: a Ref of a
// live alias is arn:aws:lambda:<region>:<account>:function:<logical id of
// its function>:<alias name>, and Fn::Join of pieces joins them; anything
// else is printed as it stands, and fails the pattern.
func aliasARN(tmpl cdkapp.Template, v any) string {
	if ref := refOf(v); ref != "" {
		if a, ok := tmpl.Resources("AWS::Lambda::Alias")[ref]; ok {
			p := props(a)
			return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s:%v", deployEnv.Region, deployEnv.Account, refOf(p["FunctionName"]), p["Name"])
		}
	}
	if m, ok := v.(map[string]any); ok {
		if j, ok := m["Fn::Join"].([]any); ok && len(j) == 2 {
			parts, _ := j[1].([]any)
			var b strings.Builder
			for _, p := range parts {
				if s, ok := p.(string); ok {
					b.WriteString(s)
				} else {
					b.WriteString(aliasARN(tmpl, p))
				}
			}
			return b.String()
		}
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// TestRolloutsByStage: prod shifts every live alias with a CodeDeploy
// canary (10% for 5 minutes) that rolls back on the function's alarms;
// dev and stage move the alias with the stack update, no CodeDeploy.
func TestRolloutsByStage(t *testing.T) {
	require.Len(t, asm.Templates, 3)
	hash := regexp.MustCompile(`[0-9A-F]{8}$`)
	for stage, stacks := range asm.Templates {
		cfg, err := config.Lookup(stage)
		require.NoError(t, err)
		for id, tmpl := range stacks {
			where := stage + "/" + id
			aliases := liveAliases(t, where, tmpl)
			groups := tmpl.Resources("AWS::CodeDeploy::DeploymentGroup")
			if cfg.RolloutOf() == config.AllAtOnce {
				assert.NotEqual(t, "prod", stage, "prod's rollout is a canary")
				assert.Empty(t, groups, "%s: no CodeDeploy", where)
				assert.Empty(t, tmpl.Resources("AWS::CodeDeploy::Application"), "%s: no CodeDeploy", where)
				for _, a := range aliases {
					assert.NotContains(t, tmpl.Resources("AWS::Lambda::Alias")[a], "UpdatePolicy", "%s alias %s", where, a)
				}
				continue
			}
			assert.Equal(t, "prod", stage)
			assert.Len(t, tmpl.Resources("AWS::CodeDeploy::Application"), 1, "%s: one CodeDeploy application", where)
			assert.Len(t, groups, len(aliases), "%s: a deployment group per alias", where)
			alarms := tmpl.Resources("AWS::CloudWatch::Alarm")
			behindAPI := map[string]bool{} // aliases an API integration invokes
			for _, r := range tmpl.Resources("AWS::ApiGatewayV2::Integration") {
				behindAPI[aliasRef(props(r)["IntegrationUri"])] = true
			}
			for fn, a := range aliases {
				alias := tmpl.Resources("AWS::Lambda::Alias")[a]
				up, _ := alias["UpdatePolicy"].(map[string]any)["CodeDeployLambdaAliasUpdate"].(map[string]any)
				require.NotNil(t, up, "%s alias %s: CodeDeploy shifts it", where, a)
				group, ok := groups[refOf(up["DeploymentGroupName"])]
				require.True(t, ok, "%s alias %s: deployment group %v", where, a, up["DeploymentGroupName"])
				p := props(group)
				assert.Equal(t, "CodeDeployDefault.LambdaCanary10Percent5Minutes", p["DeploymentConfigName"], "%s %s", where, a)
				roll, _ := p["AutoRollbackConfiguration"].(map[string]any)
				assert.Equal(t, true, roll["Enabled"], "%s %s", where, a)
				assert.ElementsMatch(t, []any{"DEPLOYMENT_FAILURE", "DEPLOYMENT_STOP_ON_REQUEST", "DEPLOYMENT_STOP_ON_ALARM"}, roll["Events"], "%s %s", where, a)
				ac, _ := p["AlarmConfiguration"].(map[string]any)
				assert.Equal(t, true, ac["Enabled"], "%s %s", where, a)
				list, _ := ac["Alarms"].([]any)
				var names []string
				for _, x := range list {
					ref := refOf(x.(map[string]any)["Name"])
					_, ok := alarms[ref]
					assert.True(t, ok, "%s %s: rollback alarm %v is an alarm of the stack", where, a, x)
					names = append(names, ref)
				}
				// The function's own error alarm is among them.
				errorsAlarm := hash.ReplaceAllString(fn, "") + "Errors"
				assert.True(t, func() bool {
					for _, n := range names {
						if strings.HasPrefix(n, errorsAlarm) {
							return true
						}
					}
					return false
				}(), "%s %s: rollback alarms %v lack %s", where, a, names, errorsAlarm)
				// A version behind the API that answers 500 raises no
				// function error: the API's 5xx alarm rolls it back.
				if behindAPI[a] {
					assert.True(t, slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "ApiServerErrors") }),
						"%s %s: behind the API, rollback alarms %v lack ApiServerErrors", where, a, names)
				}
				assert.LessOrEqual(t, len(names), 10, "CodeDeploy takes at most 10 alarms")
			}
		}
	}
}
