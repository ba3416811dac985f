package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsschedulertargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/infra/config"
)

// Retry settings of scheduled invocations. Scheduler retries a failed
// Invoke call (throttling, service errors); Lambda retries a function error
// of the asynchronous invocation. Either way, what is still failing after
// an hour is stale (the next fire comes) and goes to the failure queue.
const (
	scheduleRetries       = 3
	scheduleMaxAgeHours   = 1
	scheduledAsyncRetries = 2
)

// addScheduled is addFunction invoked by an EventBridge Scheduler schedule
// with service.ScheduleInput, on its live alias. The schedule gets its own
// role, allowed to invoke only that alias; invocations that still fail after the retries land in
// a failure queue with an alarm.
func addScheduled(stack awscdk.Stack, cfg config.Stage, fn function, sched config.Schedule) (*gofunction.Function, error) {
	if err := sched.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", fn.id, err)
	}
	f, err := addFunction(stack, cfg, fn)
	if err != nil {
		return nil, err
	}
	failures := newFailureQueue(stack, fn.id+"Failures", cfg)
	maxAge := awscdk.Duration_Hours(jsii.Number(scheduleMaxAgeHours))
	// On the alias the schedule invokes: a function's own configuration
	// is its $LATEST's, which nothing invokes.
	live(f).ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{
		RetryAttempts: jsii.Number(scheduledAsyncRetries),
		MaxEventAge:   maxAge,
		OnFailure:     awslambdadestinations.NewSqsDestination(failures),
	})
	// A role per schedule, trusted by EventBridge Scheduler for this
	// account only, allowed to invoke this function only.
	role := awsiam.NewRole(stack, jsii.String(fn.id+"ScheduleRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("scheduler.amazonaws.com"), &awsiam.ServicePrincipalOpts{
			Conditions: &map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()}},
		}),
		Description: jsii.String(fmt.Sprintf("EventBridge Scheduler invokes %s (%s)", fn.id, cfg.Name)),
	})
	awsscheduler.NewSchedule(stack, jsii.String(fn.id+"Schedule"), &awsscheduler.ScheduleProps{
		Description: jsii.String(fmt.Sprintf("%s (%s)", fn.fn.Description, cfg.Name)),
		Schedule:    awsscheduler.ScheduleExpression_Expression(jsii.String(sched.Expression), awscdk.TimeZone_Of(jsii.String(sched.Zone()))),
		Target: awsschedulertargets.NewLambdaInvoke(live(f), &awsschedulertargets.ScheduleTargetBaseProps{
			Input:           awsscheduler.ScheduleTargetInput_FromText(jsii.String(service.ScheduleInput)),
			Role:            role,
			RetryAttempts:   jsii.Number(scheduleRetries),
			MaxEventAge:     maxAge,
			DeadLetterQueue: failures,
		}),
	})
	// The target grants lambda:InvokeFunction on the alias's ARN alone
	// (…:function:<name>:live): no wildcard, no cdk-nag exception.
	alarmErrors(stack, fn.id, f.Function)
	alarmQueueDepth(stack, fn.id+"Failed", failures, fmt.Sprintf("scheduled runs of %s failed after every retry", *f.Function.Node().Path()))
	suppress(f.Role, suppression{
		id:        "AwsSolutions-IAM5",
		reason:    "X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so their resource is always *.",
		appliesTo: []string{"Resource::*"},
	})
	suppress(f.Function, suppression{
		id:     "Serverless-LambdaDLQ",
		reason: "Failed asynchronous invocations go to the on-failure destination of the function's event invoke config (" + fn.id + "Failures, alarmed), the successor of DeadLetterConfig that also records the error.",
	})
	return f, nil
}

// newFailureQueue is a queue of records a worker gave up on, read by
// people: encrypted, TLS only, kept the SQS maximum of 14 days.
func newFailureQueue(stack awscdk.Stack, id string, cfg config.Stage) awssqs.Queue {
	q := awssqs.NewQueue(stack, jsii.String(id), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		RemovalPolicy:   gofunction.LogRemovalPolicy(cfg.Name),
	})
	const lastStop = "This queue is itself the last stop (a dead-letter or on-failure destination), read by people, not by a consumer: a dead-letter queue behind it would only move the same records again."
	suppress(q,
		suppression{id: "AwsSolutions-SQS3", reason: lastStop},
		suppression{id: "Serverless-SQSRedrivePolicy", reason: lastStop},
	)
	return q
}
