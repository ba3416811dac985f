package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Alarm thresholds. Alarms carry no actions: where they notify (pager, chat,
// ticket) is each team's choice, wired with alarm.AddAlarmAction.
const (
	// alarmPeriodMinutes is the evaluation period of every alarm.
	alarmPeriodMinutes = 5
	// iteratorAgeLimitMinutes: a stream consumer further behind than this
	// means counters are stale; records older than a day are dropped.
	iteratorAgeLimitMinutes = 15
)

// alarmErrors raises when fn fails an invocation (crash, timeout, out of
// memory) or is throttled in a period. Answers with a 5xx status are not
// invocation errors: alarmServerErrors watches those at the API.
func alarmErrors(scope constructs.Construct, id string, fn awslambda.IFunction) {
	period := awscdk.Duration_Minutes(jsii.Number(alarmPeriodMinutes))
	for name, metric := range map[string]awscloudwatch.IMetric{
		"Errors":    fn.MetricErrors(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}),
		"Throttles": fn.MetricThrottles(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}),
	} {
		awscloudwatch.NewAlarm(scope, jsii.String(id+name), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String(fmt.Sprintf("%s: %s > 0 in %d minutes", *fn.Node().Path(), name, alarmPeriodMinutes)),
			Metric:             metric,
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
	}
}

// alarmStreamConsumer adds what matters for a stream consumer besides its
// errors: how far behind it is, and whether records were given up on.
func alarmStreamConsumer(scope constructs.Construct, id string, fn awslambda.IFunction, failures awssqs.IQueue) {
	alarmErrors(scope, id, fn)
	period := awscdk.Duration_Minutes(jsii.Number(alarmPeriodMinutes))
	awscloudwatch.NewAlarm(scope, jsii.String(id+"IteratorAge"), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String(fmt.Sprintf("%s is more than %d minutes behind its stream", *fn.Node().Path(), iteratorAgeLimitMinutes)),
		Metric:             fn.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum")}),
		Threshold:          jsii.Number(iteratorAgeLimitMinutes * 60 * 1000),
		EvaluationPeriods:  jsii.Number(3),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	awscloudwatch.NewAlarm(scope, jsii.String(id+"GaveUp"), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String(fmt.Sprintf("%s gave up on stream records: they wait in %s", *fn.Node().Path(), *failures.Node().Path())),
		Metric:             failures.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum")}),
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
}

// alarmServerErrors raises on any 5xx answer of an API in a period: the
// services answer 4xx for every client mistake and keep 5xx for faults.
func alarmServerErrors(scope constructs.Construct, id string, api awsapigatewayv2.HttpApi) {
	awscloudwatch.NewAlarm(scope, jsii.String(id+"ServerErrors"), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String(fmt.Sprintf("%s answered 5xx in %d minutes", *api.Node().Path(), alarmPeriodMinutes)),
		Metric:             api.MetricServerError(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(alarmPeriodMinutes)), Statistic: jsii.String("Sum")}),
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
}
