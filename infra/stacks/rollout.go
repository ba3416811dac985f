package stacks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscodedeploy"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/infra/config"
)

// liveAliases holds each function's live alias, made by addFunction: what
// every invoker of the function targets (live). Keyed by the Go value
// gofunction.New returned, so callers keep their *gofunction.Function.
var liveAliases = map[*gofunction.Function]awslambda.Alias{}

// addLiveAlias publishes f as a version (its CurrentVersion: a new version
// whenever its code or configuration changes) behind the alias
// config.LiveAlias, id <id>Live.
func addLiveAlias(stack awscdk.Stack, id string, f *gofunction.Function) awslambda.Alias {
	a := awslambda.NewAlias(stack, jsii.String(id+liveSuffix), &awslambda.AliasProps{
		AliasName:   jsii.String(config.LiveAlias),
		Version:     f.Function.CurrentVersion(),
		Description: jsii.String("What every invoker of the function calls; CodeDeploy shifts it in a canary stage (docs/deploying.md, \"A rollback\")"),
	})
	liveAliases[f] = a
	return a
}

// liveSuffix ends the construct id of every live alias: <function id>Live.
const liveSuffix = "Live"

// live is the live alias of f: what API Gateway, the event source mappings
// and the schedules invoke. A function addFunction did not make has none,
// a programming error of this package.
func live(f *gofunction.Function) awslambda.Alias {
	a, ok := liveAliases[f]
	if !ok {
		panic("stacks: function " + *f.Function.Node().Path() + " has no live alias: build it with addFunction")
	}
	return a
}

// apiAliases are the live aliases, by construct path, of the functions
// behind an HTTP API (addAPI): their rollouts roll back on the API's 5xx
// alarm too, as a version answering 500 raises no function error.
var apiAliases = map[string]bool{}

// maxRollbackAlarms is CodeDeploy's limit of alarms per deployment group.
const maxRollbackAlarms = 10

// wireRollouts gives every live alias of the stack its rollout: with
// config.AllAtOnce nothing (CloudFormation moves the alias with the stack
// update); with a canary, one CodeDeploy application for the stack and a
// Lambda deployment group per alias that shifts it as the stage's rollout
// says, rolling back when the deployment fails or is stopped, or when one
// of the function's alarms (rollbackAlarms) goes off.
func wireRollouts(stack awscdk.Stack, cfg config.Stage) error {
	var cfgDeploy awscodedeploy.ILambdaDeploymentConfig
	switch cfg.RolloutOf() {
	case config.AllAtOnce:
		return nil
	case config.Canary10Percent5Minutes:
		cfgDeploy = awscodedeploy.LambdaDeploymentConfig_CANARY_10PERCENT_5MINUTES()
	default:
		return fmt.Errorf("rollout %q has no deployment config", cfg.RolloutOf())
	}
	var aliases []awslambda.Alias
	var alarms []awscloudwatch.Alarm
	for _, c := range *stack.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		switch c := c.(type) {
		case awslambda.Alias:
			aliases = append(aliases, c)
		case awscloudwatch.Alarm:
			alarms = append(alarms, c)
		}
	}
	if len(aliases) == 0 {
		return nil
	}
	app := awscodedeploy.NewLambdaApplication(stack, jsii.String("Rollouts"), &awscodedeploy.LambdaApplicationProps{
		ApplicationName: jsii.String(*stack.StackName()),
	})
	for _, a := range aliases {
		id := strings.TrimSuffix(*a.Node().Id(), liveSuffix)
		triggers := rollbackAlarms(id, alarms, apiAliases[*a.Node().Path()])
		if len(triggers) == 0 {
			return fmt.Errorf("function %s has no alarm to roll a canary back with", id)
		}
		if len(triggers) > maxRollbackAlarms {
			return fmt.Errorf("function %s has %d alarms, and a CodeDeploy deployment group takes at most %d", id, len(triggers), maxRollbackAlarms)
		}
		refs := make([]interfacesawscloudwatch.IAlarmRef, len(triggers))
		for i, t := range triggers {
			refs[i] = t
		}
		g := awscodedeploy.NewLambdaDeploymentGroup(stack, jsii.String(id+"Rollout"), &awscodedeploy.LambdaDeploymentGroupProps{
			Application:      app,
			Alias:            a,
			DeploymentConfig: cfgDeploy,
			Alarms:           &refs,
			AutoRollback: &awscodedeploy.AutoRollbackConfig{
				FailedDeployment:  jsii.Bool(true),
				StoppedDeployment: jsii.Bool(true),
				DeploymentInAlarm: jsii.Bool(true),
			},
		})
		suppress(g, suppression{
			id:        "AwsSolutions-IAM4",
			reason:    "CodeDeploy's service role for Lambda deployments takes the AWS managed policy AWSCodeDeployRoleForLambdaLimited, which allows shifting aliases and reading alarms and nothing else; CodeDeploy documents it for exactly this role.",
			appliesTo: []string{"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited"},
		})
	}
	return nil
}

// rollbackAlarms are the alarms of the function with construct id id, by
// the ids this package gives them: <id>Errors, <id>Throttles,
// <id>Duration, <id>IteratorAge, <id>FailedDepth, <id>GaveUpDepth; and
// for a function behind the API (api) the API's 5xx alarm (Api…). Sorted
// by construct id, so the template keeps one order.
func rollbackAlarms(id string, alarms []awscloudwatch.Alarm, api bool) []awscloudwatch.Alarm {
	var out []awscloudwatch.Alarm
	for _, a := range alarms {
		name := *a.Node().Id()
		if owns(id, name) || (api && owns("Api", name)) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return *out[i].Node().Id() < *out[j].Node().Id() })
	return out
}

// owns reports whether the alarm id names prefix and then a new word.
func owns(prefix, alarm string) bool {
	rest, ok := strings.CutPrefix(alarm, prefix)
	return ok && rest != "" && rest[0] >= 'A' && rest[0] <= 'Z'
}

// apiFunctionID is the construct id of every service's API function.
const apiFunctionID = "Handler"
