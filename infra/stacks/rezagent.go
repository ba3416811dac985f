package stacks

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsxray"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/rezagent"
	rezagentcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/infra/config"
)

// The processor's time budget: one ntfy call is bounded well below it (the
// code's own timeout), and SQS hides a received batch for six times it, so
// a batch is never handed to a second invocation while the first runs
// (AWS's guidance for Lambda event sources).
const (
	rezAgentProcessorTimeoutSecs = 30
	rezAgentVisibilityFactor     = 6
)

func buildRezAgent(stack awscdk.Stack, cfg config.Stage) error {
	pipeline := cfg.RezAgent.WithDefaults(string(cfg.Name))
	if err := pipeline.Validate(); err != nil {
		return err
	}
	messages, err := rezagent.NewMessagesTable(stack, "Messages", rezagent.MessagesProps{
		Props:            props(cfg, rezagentcontract.Name, "Messages"),
		MessageTypeIndex: cfg.RezAgentMessageTypeIndex,
	})
	if err != nil {
		return err
	}

	// SNS → SQS, both encrypted and TLS-only. Raw delivery: the queue body
	// is the published JSON, not SNS's envelope around it, and the
	// publisher's message attributes (correlation_id) become the record's.
	// Active tracing: SNS sends its own segments of a sampled publish to
	// X-Ray, between the publishing function's and the processor's.
	topic := awssns.NewTopic(stack, jsii.String("Notifications"), &awssns.TopicProps{
		MasterKey:     awskms.Alias_FromAliasName(stack, jsii.String("SnsKey"), jsii.String("alias/aws/sns")),
		EnforceSSL:    jsii.Bool(true),
		TracingConfig: awssns.TracingConfig_ACTIVE,
	})
	allowSNSTracing(stack, cfg, topic)
	dlq := newFailureQueue(stack, "NotificationsDLQ", cfg)
	queue := awssqs.NewQueue(stack, jsii.String("NotificationsQueue"), &awssqs.QueueProps{
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(rezAgentProcessorTimeoutSecs * rezAgentVisibilityFactor)),
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(4)),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(float64(pipeline.MaxReceiveCount))},
		RemovalPolicy:     awscdk.RemovalPolicy_DESTROY,
	})
	// What SNS cannot deliver to the queue lands in the DLQ as well: both
	// are notifications nobody will send without a person.
	topic.AddSubscription(awssnssubscriptions.NewSqsSubscription(queue, &awssnssubscriptions.SqsSubscriptionProps{
		RawMessageDelivery: jsii.Bool(true),
		DeadLetterQueue:    dlq,
	}))
	alarmQueueAge(stack, "NotificationsQueue", queue)
	alarmQueueDepth(stack, "NotificationsDLQ", dlq, "notification records were received "+strconv.Itoa(pipeline.MaxReceiveCount)+" times without success")

	apiEnv := map[string]*string{rezagentcontract.EnvTopicArn: topic.TopicArn()}
	// Create (put), get, status changes (update), lists by stage and
	// status, metrics (queries on both indexes): no delete, no scan. Where
	// the stage deploys the type index, lists and counts by type query it.
	apiIndexes := []string{rezagentcontract.IndexStageCreatedDate, rezagentcontract.IndexStatusCreatedDate}
	if cfg.RezAgentMessageTypeIndex {
		apiIndexes = append(apiIndexes, rezagentcontract.IndexMessageTypeCreatedDate)
		apiEnv[rezagentcontract.EnvTypeIndex] = jsii.String(rezagentcontract.IndexMessageTypeCreatedDate)
	}
	apis, err := addAPI(stack, cfg, function{
		id: "Handler", fn: rezagentcontract.API,
		tables: []access{{messages, rezagentcontract.EnvTable, exactly(
			[]string{ddbGet, ddbPut, ddbUpdate}, apiIndexes...)}},
		env: apiEnv,
	}, nil)
	if err != nil {
		return err
	}
	api := apis[0]
	grantPublish(topic, api.Function)

	scheduler, err := addScheduled(stack, cfg, function{
		id: "Scheduler", fn: rezagentcontract.Scheduler,
		tables: []access{{messages, rezagentcontract.EnvTable, exactly(
			[]string{"dynamodb:PutItem", "dynamodb:UpdateItem"}, rezagentcontract.IndexStatusCreatedDate)}},
		env: map[string]*string{
			rezagentcontract.EnvTopicArn:       topic.TopicArn(),
			rezagentcontract.EnvRepublishAfter: jsii.String(pipeline.RepublishAfter.String()),
		},
	}, pipeline.Schedule)
	if err != nil {
		return err
	}
	grantPublish(topic, scheduler.Function)

	procEnv := map[string]*string{
		rezagentcontract.EnvNtfyURL:         jsii.String(pipeline.NtfyURL),
		rezagentcontract.EnvNtfyTopic:       jsii.String(pipeline.NtfyTopic),
		rezagentcontract.EnvMaxReceiveCount: jsii.String(strconv.Itoa(pipeline.MaxReceiveCount)),
	}
	if pipeline.NtfyTokenParameter != "" {
		procEnv[rezagentcontract.EnvNtfyTokenParameter] = jsii.String(pipeline.NtfyTokenParameter)
	}
	// The mapping runs at most MaxConcurrency at once; reserving fewer
	// would throttle the batches it hands over.
	processorReserved := cfg.Concurrency(rezagentcontract.Processor)
	if processorReserved > 0 {
		processorReserved = max(processorReserved, pipeline.MaxConcurrency)
	}
	processor, err := addFunction(stack, cfg, function{
		id: "Processor", fn: rezagentcontract.Processor,
		timeoutSeconds: rezAgentProcessorTimeoutSecs,
		reserved:       processorReserved,
		// Claim, finish and release are conditional updates that return the
		// item (ReturnValuesOnConditionCheckFailure): no read of its own.
		tables: []access{{messages, rezagentcontract.EnvTable, exactly([]string{ddbUpdate})}},
		env:    procEnv,
	})
	if err != nil {
		return err
	}
	queue.GrantConsumeMessages(processor.Function)
	mapping := awslambda.NewEventSourceMapping(stack, jsii.String("ProcessorMapping"), &awslambda.EventSourceMappingProps{
		Target:                  live(processor),
		EventSourceArn:          queue.QueueArn(),
		BatchSize:               jsii.Number(float64(pipeline.BatchSize)),
		MaxConcurrency:          jsii.Number(float64(pipeline.MaxConcurrency)),
		ReportBatchItemFailures: jsii.Bool(true),
	})
	suppress(mapping, suppression{
		id:     "Serverless-LambdaEventSourceMappingDestination",
		reason: "An SQS event source mapping takes no on-failure destination: the queue's redrive policy moves records that fail maxReceiveCount receives to NotificationsDLQ, which is alarmed.",
	})
	if pipeline.NtfyTokenParameter != "" {
		processor.Function.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("ssm:GetParameter"),
			Resources: &[]*string{stack.FormatArn(&awscdk.ArnComponents{
				Service: jsii.String("ssm"), Resource: jsii.String("parameter"), ResourceName: jsii.String(pipeline.NtfyTokenParameter[1:]),
			})},
		}))
	}
	alarmErrors(stack, "Processor", processor.Function)
	alarmFailedForGood(stack, "Processor")
	suppress(processor.Role, suppression{
		id:        "AwsSolutions-IAM5",
		reason:    "X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so their resource is always *.",
		appliesTo: []string{"Resource::*"},
	})
	suppress(processor.Function, suppression{
		id:     "Serverless-LambdaDLQ",
		reason: fmt.Sprintf("Invoked by an SQS event source mapping, never asynchronously: records failing %d receives move to the queue's dead-letter queue (NotificationsDLQ).", pipeline.MaxReceiveCount),
	})
	return nil
}

// allowSNSTracing lets SNS send the segments of the topic's active
// tracing to X-Ray: an X-Ray resource policy (one per account and name,
// so the name carries the stage) for the SNS service principal, limited
// to this account and this topic. Without it SNS drops its segments.
func allowSNSTracing(stack awscdk.Stack, cfg config.Stage, topic awssns.ITopic) {
	doc := stack.ToJsonString(map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Sid":       "SNSActiveTracing",
			"Effect":    "Allow",
			"Principal": map[string]any{"Service": "sns.amazonaws.com"},
			"Action":    []string{"xray:PutTraceSegments", "xray:GetSamplingRules", "xray:GetSamplingTargets"},
			// X-Ray's actions take no resource-level permissions.
			"Resource": "*",
			"Condition": map[string]any{
				"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()},
				"ArnLike":      map[string]any{"aws:SourceArn": topic.TopicArn()},
			},
		}},
	}, nil)
	awsxray.NewCfnResourcePolicy(stack, jsii.String("SnsTracingPolicy"), &awsxray.CfnResourcePolicyProps{
		PolicyName:     jsii.String("rezagent-sns-tracing-" + string(cfg.Name)),
		PolicyDocument: doc,
	})
}

// grantPublish allows sns:Publish on topic only. Unlike Topic.GrantPublish
// it adds no KMS statement: the AWS-managed aws/sns key's own policy lets
// the account's principals use it through SNS, and an IAM grant on
// key/* would reach every key of the account.
func grantPublish(topic awssns.ITopic, fn awslambda.IFunction) {
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sns:Publish"),
		Resources: &[]*string{topic.TopicArn()},
	}))
}
