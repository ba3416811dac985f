package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	agenticpmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezagentcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
)

// alarmFailedForGood raises when failedForGoodPercent or more of at least
// minSamples of rez_agent's finished deliveries in a period failed for
// good (acknowledged, never retried, never in the DLQ): an expired ntfy
// token, a topic ntfy refuses. Runbook: docs/schemas/rezagent.md,
// "Alarm: FailedForGood".
func alarmFailedForGood(scope constructs.Construct, id string) awscloudwatch.Alarm {
	f, m := rezagentcontract.Processor, rezagentcontract.Deliveries
	outcome := func(o string) awscloudwatch.Metric {
		return businessMetric(f, m, "Sum", map[string]string{rezagentcontract.DimOutcome: o})
	}
	finished := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression:   jsii.String("FILL(delivered, 0) + FILL(failed, 0)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{"delivered": outcome(rezagentcontract.OutcomeDelivered), "failed": outcome(rezagentcontract.OutcomeFailedForGood)},
		Label:        jsii.String("finished deliveries"),
		Period:       alarmPeriod(),
	})
	return newAlarm(scope, id+"FailedForGood", fmt.Sprintf("rez_agent: %d%% or more of at least %d finished deliveries failed for good in %d minutes (notifications lost: docs/schemas/rezagent.md, Alarm: FailedForGood)", failedForGoodPercent, minSamples, alarmPeriodMinutes),
		ratePercent("failed-for-good rate (%)", outcome(rezagentcontract.OutcomeFailedForGood), finished), failedForGoodPercent, 1)
}

// alarmFailedResourceActions raises on failedActionsLimit failed start
// or stop actions of Nucleus's executor in a period: a resource left
// against its schedule (a role that denies, an account gone inactive).
// Runbook: docs/schemas/nucleus.md, "Alarm: FailedResourceActions".
func alarmFailedResourceActions(scope constructs.Construct, id string) awscloudwatch.Alarm {
	return newAlarm(scope, id+"FailedResourceActions", fmt.Sprintf("Nucleus: %d or more start/stop actions failed in %d minutes (docs/schemas/nucleus.md, Alarm: FailedResourceActions)", failedActionsLimit, alarmPeriodMinutes),
		businessMetric(nucleuscontract.Executor, nucleuscontract.ResourceActions, "Sum", map[string]string{nucleuscontract.DimOutcome: nucleuscontract.OutcomeFailed}),
		failedActionsLimit, 1)
}

// alarmOverdueHeldActions raises when a release run finds held actions
// due more than agenticpmcontract.OverdueGraceMinutes ago: releases that
// failed or runs that did not happen. Runbook: docs/schemas/agenticpm.md,
// "Alarm: OverdueHeldActions".
func alarmOverdueHeldActions(scope constructs.Construct, id string) awscloudwatch.Alarm {
	return newAlarm(scope, id+"OverdueHeldActions", fmt.Sprintf("AgenticPM: a release run found held actions more than %d minutes past their heldUntil (docs/schemas/agenticpm.md, Alarm: OverdueHeldActions)", agenticpmcontract.OverdueGraceMinutes),
		businessMetric(agenticpmcontract.Release, agenticpmcontract.OverdueHeldActions, "Maximum", nil),
		overdueHeldLimit, 1)
}

// alarmCounterDrift raises when the hourly drift check (a read-only
// recount of a sample of users and inboxes) finds a counter that differs
// from the messages it counts: lost stream records, a bug, an edit by
// hand; users see wrong unread numbers until an operator recounts. The
// operator's own recount (CounterRepairs) is left out: it is the repair,
// run by someone who already knows, and an alarm raised by the fix would
// page for what is being fixed (it stays on the dashboard). Runbook:
// docs/schemas/stak.md, "Alarm: CounterDrift".
func alarmCounterDrift(scope constructs.Construct, id string) awscloudwatch.Alarm {
	return newAlarm(scope, id+"CounterDrift", fmt.Sprintf("Stak: the hourly drift check found %d or more sampled counters drifted from their messages (docs/schemas/stak.md, Alarm: CounterDrift)", counterDriftLimit),
		businessMetric(stakcontract.DriftCheck, stakcontract.CounterDrift, "Sum", nil),
		counterDriftLimit, 1)
}
