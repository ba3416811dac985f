package stacks

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/infra/config"
)

// Alarm thresholds. Every alarm notifies the stack's alarm topic
// (wireAlarms), whose subscribers come from infra/config.
const (
	// alarmPeriodMinutes is the evaluation period of every alarm.
	alarmPeriodMinutes = 5
	// iteratorAgeLimitMinutes: a stream consumer further behind than this
	// means counters are stale; records older than a day are dropped.
	iteratorAgeLimitMinutes = 15
	// errorRatePercent or more of invocations (or API requests) failing in
	// a period raises the error alarms, once at least minSamples ran: one failure in
	// three calls at night is noise, 5% of a busy period is not.
	errorRatePercent = 5
	minSamples       = 20
	// durationTimeoutPercent: a p99 duration above this share of the
	// timeout means the slowest calls are about to time out.
	durationTimeoutPercent = 80
	// throttlePeriods of DynamoDB throttle events in a row raise the
	// throttle alarms: a table at its on-demand cap for ten minutes, not a
	// burst the SDK's retries absorbed.
	throttlePeriods = 2
	// systemErrorsLimit DynamoDB 500s in a period raise the alarm; the SDK
	// retries them, so a few are invisible to callers.
	systemErrorsLimit = 5
	// queueAgeLimitMinutes: a work queue whose oldest message is older
	// than this is not being drained.
	queueAgeLimitMinutes = 15
)

// systemErrorOperations are the DynamoDB operations whose SystemErrors are
// watched, as CloudWatch names them in the Operation dimension: every call
// the services make (a metric math alarm takes at most 10 metrics, so not
// every operation CloudWatch knows).
var systemErrorOperations = []string{
	"GetItem", "BatchGetItem", "Query", "PutItem", "UpdateItem", "DeleteItem",
	"BatchWriteItem", "TransactWriteItems", "GetRecords",
}

// alarmPeriod is one Duration for every alarm and metric of the app: a
// Duration is an immutable value, and each new one is a round trip to the
// jsii kernel (about 400 of them per synth).
var alarmPeriod = sync.OnceValue(func() awscdk.Duration { return awscdk.Duration_Minutes(jsii.Number(alarmPeriodMinutes)) })

// newAlarm is every alarm of the app: treat missing data as fine (no
// traffic is not a fault) and compare with >=. Actions are added by
// wireAlarms, for alarms made here and anywhere else in the stack.
func newAlarm(scope constructs.Construct, id, description string, metric awscloudwatch.IMetric, threshold float64, periods int) awscloudwatch.Alarm {
	return awscloudwatch.NewAlarm(scope, jsii.String(id), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String(description),
		Metric:             metric,
		Threshold:          jsii.Number(threshold),
		EvaluationPeriods:  jsii.Number(float64(periods)),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
}

// ratePercent is 100 × part / whole in a period, 0 while whole is below
// minSamples.
func ratePercent(label string, part, whole awscloudwatch.IMetric) awscloudwatch.MathExpression {
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression:   jsii.String(fmt.Sprintf("IF(whole >= %d, 100 * part / whole, 0)", minSamples)),
		UsingMetrics: &map[string]awscloudwatch.IMetric{"part": part, "whole": whole},
		Label:        jsii.String(label),
		Period:       alarmPeriod(),
	})
}

func sum(m func(*awscloudwatch.MetricOptions) awscloudwatch.Metric) awscloudwatch.Metric {
	return m(&awscloudwatch.MetricOptions{Period: alarmPeriod(), Statistic: jsii.String("Sum")})
}

// alarmErrors watches fn: the share of failed invocations (crash, timeout,
// out of memory) and of throttled ones (its reserved concurrency reached),
// and a p99 duration near its timeout. Answers with a 5xx status are
// not invocation errors: alarmServerErrors watches those at the API.
func alarmErrors(scope constructs.Construct, id string, fn awslambda.IFunction) {
	path := *fn.Node().Path()
	timeoutSeconds := gofunction.DefaultTimeout
	if cfn, ok := fn.Node().DefaultChild().(awslambda.CfnFunction); ok && cfn.Timeout() != nil {
		timeoutSeconds = int(*cfn.Timeout())
	}
	invocations := sum(fn.MetricInvocations)
	throttles := sum(fn.MetricThrottles)
	attempts := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression:   jsii.String("inv + thr"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{"inv": invocations, "thr": throttles},
		Period:       alarmPeriod(),
	})
	newAlarm(scope, id+"Errors", fmt.Sprintf("%s: %d%% or more of at least %d invocations failed in %d minutes", path, errorRatePercent, minSamples, alarmPeriodMinutes),
		ratePercent("error rate (%)", sum(fn.MetricErrors), invocations), errorRatePercent, 1)
	newAlarm(scope, id+"Throttles", fmt.Sprintf("%s: %d%% or more of at least %d invocation attempts throttled in %d minutes (reserved concurrency reached)", path, errorRatePercent, minSamples, alarmPeriodMinutes),
		ratePercent("throttle rate (%)", throttles, attempts), errorRatePercent, 1)
	limit := float64(timeoutSeconds*1000*durationTimeoutPercent) / 100
	newAlarm(scope, id+"Duration", fmt.Sprintf("%s: p99 duration at or above %d%% of its %d s timeout in %d minutes", path, durationTimeoutPercent, timeoutSeconds, alarmPeriodMinutes),
		fn.MetricDuration(&awscloudwatch.MetricOptions{Period: alarmPeriod(), Statistic: jsii.String("p99")}), limit, 1)
}

// alarmStreamConsumer adds what matters for a stream consumer besides its
// errors: how far behind it is, and whether records were given up on.
func alarmStreamConsumer(scope constructs.Construct, id string, fn awslambda.IFunction, failures awssqs.IQueue) {
	alarmErrors(scope, id, fn)
	path := *fn.Node().Path()
	newAlarm(scope, id+"IteratorAge", fmt.Sprintf("%s is more than %d minutes behind its stream", path, iteratorAgeLimitMinutes),
		fn.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Period: alarmPeriod(), Statistic: jsii.String("Maximum")}),
		iteratorAgeLimitMinutes*60*1000, 3)
	alarmQueueDepth(scope, id+"GaveUp", failures, fmt.Sprintf("%s gave up on stream records", path))
}

// alarmQueueDepth raises when q holds a message: for a failure queue every
// message is work nobody did.
func alarmQueueDepth(scope constructs.Construct, id string, q awssqs.IQueue, what string) awscloudwatch.Alarm {
	return newAlarm(scope, id+"Depth", fmt.Sprintf("%s: they wait in %s", what, *q.Node().Path()),
		q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: alarmPeriod(), Statistic: jsii.String("Maximum")}), 1, 1)
}

// alarmQueueAge raises when the oldest message of a work queue waits
// longer than queueAgeLimitMinutes: its consumer is failing or starved.
func alarmQueueAge(scope constructs.Construct, id string, q awssqs.IQueue) awscloudwatch.Alarm {
	return newAlarm(scope, id+"Age", fmt.Sprintf("%s: oldest message older than %d minutes (consumer failing or starved)", *q.Node().Path(), queueAgeLimitMinutes),
		q.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: alarmPeriod(), Statistic: jsii.String("Maximum")}), queueAgeLimitMinutes*60, 1)
}

// alarmServerErrors raises when errorRatePercent or more of at least
// minSamples requests of an API answer 5xx in a period: the services answer
// 4xx for every client mistake and keep 5xx for faults.
func alarmServerErrors(scope constructs.Construct, id string, api awsapigatewayv2.HttpApi, functions []service.Function) {
	// 503 unavailable answers (DynamoDB throttled or failed after the
	// function's retries: the client backs off and retries) are counted by
	// the functions (service.MetricUnavailable) and left out: the table's
	// throttle alarms report those.
	using := map[string]awscloudwatch.IMetric{"errors": sum(api.MetricServerError)}
	expression := "FILL(errors, 0)"
	for i, f := range functions {
		name := "unavailable"
		if i > 0 {
			name = fmt.Sprintf("unavailable%d", i+1)
		}
		using[name] = awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(service.MetricNamespace), MetricName: jsii.String(service.MetricUnavailable),
			DimensionsMap: &map[string]*string{service.MetricDimension: jsii.String(f.Name)},
			Period:        alarmPeriod(), Statistic: jsii.String("Sum"),
		})
		expression += fmt.Sprintf(" - FILL(%s, 0)", name)
	}
	serverErrors := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression:   jsii.String(expression),
		UsingMetrics: &using,
		Label:        jsii.String("5xx other than 503 unavailable"),
		Period:       alarmPeriod(),
	})
	newAlarm(scope, id+"ServerErrors", fmt.Sprintf("%s: %d%% or more of at least %d requests answered 5xx (503 unavailable aside) in %d minutes", *api.Node().Path(), errorRatePercent, minSamples, alarmPeriodMinutes),
		ratePercent("5xx rate (%)", serverErrors, sum(api.MetricCount)), errorRatePercent, 1)
}

// apiIntegrationTimeoutSeconds is API Gateway's HTTP API integration
// timeout: a slower answer reaches the client as a 503 whatever the
// function's own timeout.
const apiIntegrationTimeoutSeconds = 30

// alarmRouteLatency watches each route of the HTTP function fn: its p99
// answer time (service.RouteLatency by route, every status class) at or
// above durationTimeoutPercent of the time a request may take (fn's
// timeout, or API Gateway's integration timeout if shorter) for a period:
// that route's slowest callers are about to get timeouts. One alarm per
// route, on a single metric: a metric math alarm takes at most 10 metrics
// (AgenticPM has 31 routes), and a single metric is what the local alarm
// evaluator computes. Runbook: docs/functions.md, "Alarm: RouteLatency".
func alarmRouteLatency(scope constructs.Construct, fn service.Function, timeoutSeconds int) {
	limitMs := float64(min(timeoutSeconds, apiIntegrationTimeoutSeconds)*1000*durationTimeoutPercent) / 100
	m := service.RouteLatency(fn)
	for _, r := range fn.Routes {
		newAlarm(scope, routeID("Route", r)+"Latency", fmt.Sprintf("%s %s: p99 answer time at or above %d%% of the %d s a request may take, in %d minutes (docs/functions.md, Alarm: RouteLatency)", fn.Name, r.Key(), durationTimeoutPercent, min(timeoutSeconds, apiIntegrationTimeoutSeconds), alarmPeriodMinutes),
			businessMetric(fn, m, "p99", map[string]string{service.DimRoute: r.Key()}), limitMs, 1)
	}
}

// routeID is a construct id for r: its method and path in words
// ("GET /tickets/{id}/comments" is GetTicketsIdComments), stable when
// routes are added or reordered.
func routeID(prefix string, r service.Route) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, part := range strings.FieldsFunc(r.Method+"/"+r.Path, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	}) {
		b.WriteString(strings.ToUpper(part[:1]) + strings.ToLower(part[1:]))
	}
	return b.String()
}

// alarmTable watches a table: read and write throttle events of the table
// and its indexes (an on-demand cap reached, or a hot partition), and
// DynamoDB's own 500s.
func alarmTable(scope constructs.Construct, id string, t awsdynamodb.TableV2) []awscloudwatch.Alarm {
	var alarms []awscloudwatch.Alarm
	path := *t.Node().Path()
	name := t.TableName()
	indexes := tableIndexNames(t)
	for _, kind := range []string{"Read", "Write"} {
		metrics := map[string]awscloudwatch.IMetric{}
		var terms []string
		for i, ix := range append([]string{""}, indexes...) {
			dims := map[string]*string{"TableName": name}
			if ix != "" {
				dims["GlobalSecondaryIndexName"] = jsii.String(ix)
			}
			term := fmt.Sprintf("t%d", i)
			metrics[term] = awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
				Namespace: jsii.String("AWS/DynamoDB"), MetricName: jsii.String(kind + "ThrottleEvents"),
				DimensionsMap: &dims, Period: alarmPeriod(), Statistic: jsii.String("Sum"),
			})
			terms = append(terms, filled(term))
		}
		alarms = append(alarms, newAlarm(scope, id+kind+"Throttles", fmt.Sprintf("%s: %s throttle events on the table or an index for %d periods of %d minutes (on-demand cap reached or hot partition)", path, strings.ToLower(kind), throttlePeriods, alarmPeriodMinutes),
			awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
				Expression: jsii.String(strings.Join(terms, " + ")), UsingMetrics: &metrics,
				Label: jsii.String(kind + "ThrottleEvents"), Period: alarmPeriod(),
			}), 1, throttlePeriods))
	}
	// Not MetricSystemErrorsForOperations: its sum of the operations'
	// metrics has no FILL, so a period in which one operation failed and
	// the others had no error has no datapoint, and the alarm never fires
	// (proved by the local runner's TestAlarmsFire).
	sysMetrics := map[string]awscloudwatch.IMetric{}
	var sysTerms []string
	for _, op := range systemErrorOperations {
		term := strings.ToLower(op)
		sysMetrics[term] = awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("AWS/DynamoDB"), MetricName: jsii.String("SystemErrors"),
			DimensionsMap: &map[string]*string{"TableName": name, "Operation": jsii.String(op)},
			Period:        alarmPeriod(), Statistic: jsii.String("Sum"),
		})
		sysTerms = append(sysTerms, filled(term))
	}
	return append(alarms, newAlarm(scope, id+"SystemErrors", fmt.Sprintf("%s: %d or more DynamoDB system errors (500) in %d minutes", path, systemErrorsLimit, alarmPeriodMinutes),
		awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(strings.Join(sysTerms, " + ")), UsingMetrics: &sysMetrics,
			Label: jsii.String("SystemErrors"), Period: alarmPeriod(),
		}), systemErrorsLimit, 1))
}

// filled is a metric math term with its missing datapoints as 0: metric
// math has no datapoint where any term has none, so a sum of metrics that
// are published only when something happens (throttle events, system
// errors) is empty unless every one of them happened in the period.
func filled(term string) string { return "FILL(" + term + ", 0)" }

// tableIndexNames reads the index names from the synthesized properties,
// so every table is covered however it was built.
func tableIndexNames(t awsdynamodb.TableV2) []string {
	cfn, ok := t.Node().DefaultChild().(awsdynamodb.CfnGlobalTable)
	if !ok {
		return nil
	}
	resolved := awscdk.Stack_Of(t).Resolve(cfn.GlobalSecondaryIndexes())
	list, _ := resolved.([]any)
	var names []string
	for _, ix := range list {
		if m, ok := ix.(map[string]any); ok {
			if n, ok := m["indexName"].(string); ok {
				names = append(names, n)
			} else if n, ok := m["IndexName"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// wireAlarms is the one place alarms get their audience: it watches every
// table of the stack, then gives every alarm of the stack — these, and
// those each service's build added — the stack's alarm topic as its ALARM
// and OK action. A topic per stack keeps stacks deployable one by one.
func wireAlarms(stack awscdk.Stack, cfg config.Stage, c service.Contract) {
	// One walk of the tree (each construct it returns is a proxy the jsii
	// runtime builds): the tables' alarms are added to what it found.
	var alarms []awscloudwatch.Alarm
	var f found
	for _, x := range *stack.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		switch x := x.(type) {
		case awscloudwatch.Alarm:
			alarms = append(alarms, x)
		case awsdynamodb.TableV2:
			f.tables = append(f.tables, x)
			alarms = append(alarms, alarmTable(stack, *x.Node().Id(), x)...)
		case awslambda.Function:
			f.functions = append(f.functions, x)
		case awsapigatewayv2.HttpApi:
			f.apis = append(f.apis, x)
		case awssqs.Queue:
			f.queues = append(f.queues, x)
		}
	}
	addDashboard(stack, cfg, c, f)
	action := awscloudwatchactions.NewSnsAction(newAlarmTopic(stack, cfg))
	for _, a := range alarms {
		a.AddAlarmAction(action)
		a.AddOkAction(action)
	}
}

// newAlarmTopic is the stack's alarm topic: encrypted with a key of its
// own (CloudWatch cannot use the AWS-managed aws/sns key, whose policy
// nobody can extend), TLS only, published to by this account's CloudWatch
// alarms, subscribed by cfg.Alarms.
func newAlarmTopic(stack awscdk.Stack, cfg config.Stage) awssns.Topic {
	key := awskms.NewKey(stack, jsii.String("AlarmsKey"), &awskms.KeyProps{
		Description:       jsii.String(fmt.Sprintf("Encrypts the alarm topic of %s", *stack.StackName())),
		EnableKeyRotation: jsii.Bool(true),
		// The key protects notifications in flight only; nothing stored
		// needs it once the stack is gone.
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		PendingWindow: awscdk.Duration_Days(jsii.Number(7)),
	})
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarmsPublish"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"),
		Resources:  jsii.Strings("*"),
		Conditions: &map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()}},
	}), nil)
	// Only AWS services may create grants on the key (CT.KMS.PR.3): no
	// principal can hand its use to another.
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("GrantsForAWSServicesOnly"),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions:    jsii.Strings("kms:CreateGrant"),
		Resources:  jsii.Strings("*"),
		Conditions: &map[string]any{"BoolIfExists": map[string]any{"kms:GrantIsForAWSResource": "false", "aws:PrincipalIsAWSService": "false"}},
	}), nil)
	topic := awssns.NewTopic(stack, jsii.String("Alarms"), &awssns.TopicProps{
		DisplayName: jsii.String(fmt.Sprintf("dynastack alarms %s", *stack.StackName())),
		MasterKey:   key,
		EnforceSSL:  jsii.Bool(true),
	})
	// A topic policy replaces SNS's default one, which let the account's
	// principals publish: EnforceSSL's TLS-only deny alone leaves CloudWatch
	// nothing that allows sns:Publish, and every alarm would fail to
	// notify ("not authorized to perform: SNS:Publish"). CloudWatch may
	// publish for this account's alarms of this region only (confused
	// deputy: aws:SourceAccount and aws:SourceArn).
	topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarmsPublish"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  &[]*string{topic.TopicArn()},
		Conditions: &map[string]any{
			"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()},
			"ArnLike": map[string]any{"aws:SourceArn": stack.FormatArn(&awscdk.ArnComponents{
				Service: jsii.String("cloudwatch"), Resource: jsii.String("alarm"), ResourceName: jsii.String("*"),
				ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME,
			})},
		},
	}))
	subscribe(topic, cfg.Alarms)
	suppress(topic, suppression{
		id:     "Serverless-SNSRedrivePolicy",
		reason: "Alarm notifications to people: SNS retries email and HTTPS deliveries itself, and a dead-letter queue of undelivered notifications would need its own watcher; the alarm state stays in CloudWatch either way.",
	})
	return topic
}

// subscribe adds the stage's alarm subscribers to topic. A webhook held
// by a Secrets Manager secret is subscribed through a dynamic reference,
// {{resolve:secretsmanager:<name>:SecretString:::}}: CloudFormation
// resolves it at deploy, and the URL never enters the template.
func subscribe(topic awssns.Topic, a config.AlarmSubscribers) {
	https := &awssnssubscriptions.UrlSubscriptionProps{Protocol: awssns.SubscriptionProtocol_HTTPS}
	for _, e := range a.Emails {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(e), nil))
	}
	for _, u := range a.HTTPSEndpoints {
		topic.AddSubscription(awssnssubscriptions.NewUrlSubscription(jsii.String(u), https))
	}
	for _, name := range a.HTTPSEndpointSecrets {
		url := awscdk.SecretValue_SecretsManager(jsii.String(name), nil).UnsafeUnwrap()
		topic.AddSubscription(awssnssubscriptions.NewUrlSubscription(url, https))
	}
}

// Alarms on what users feel: the business metrics the functions emit
// (service.Metric, in the contracts; platform/metrics writes them).
const (
	// failedForGoodPercent or more of at least minSamples rez_agent
	// deliveries that ended (delivered or failed for good) in a period
	// failing for good raises FailedForGood: notifications lost for good.
	failedForGoodPercent = errorRatePercent
	// failedActionsLimit failed Nucleus resource actions in a period
	// raise FailedResourceActions: one is a resource left running (or
	// stopped) against its schedule.
	failedActionsLimit = 1
	// overdueHeldLimit held AgenticPM actions overdue by more than the
	// grace (agenticpmcontract.OverdueGraceMinutes) at a release run raise
	// OverdueHeldActions.
	overdueHeldLimit = 1
	// counterDriftLimit drifted counters the Stak drift check found in a
	// period raise CounterDrift.
	counterDriftLimit = 1
)

// businessMetric is metric m of function f (its service dimension) with
// the further dimension values dims: one of m's dimension sets, with
// values m lists. A name or value the contract does not have panics: the
// alarm would watch a metric nobody emits.
func businessMetric(f service.Function, m service.Metric, statistic string, dims map[string]string) awscloudwatch.Metric {
	if !slices.ContainsFunc(f.AllMetrics(), func(x service.Metric) bool { return x.Name == m.Name }) {
		panic(fmt.Sprintf("stacks: function %s does not emit %s", f.Name, m.Name))
	}
	dm := map[string]*string{service.MetricDimension: jsii.String(f.Name)}
	for k, v := range dims {
		d, ok := m.Dimension(k)
		if !ok || !slices.Contains(d.Values, v) {
			panic(fmt.Sprintf("stacks: metric %s has no dimension %s=%s", m.Name, k, v))
		}
		dm[k] = jsii.String(v)
	}
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String(service.MetricNamespace), MetricName: jsii.String(m.Name),
		DimensionsMap: &dm, Period: alarmPeriod(), Statistic: jsii.String(statistic),
	})
}
