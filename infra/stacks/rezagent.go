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
	// is the published JSON, not SNS's envelope around it.
	topic := awssns.NewTopic(stack, jsii.String("Notifications"), &awssns.TopicProps{
		MasterKey:  awskms.Alias_FromAliasName(stack, jsii.String("SnsKey"), jsii.String("alias/aws/sns")),
		EnforceSSL: jsii.Bool(true),
	})
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

	publishEnv := map[string]*string{rezagentcontract.EnvTopicArn: topic.TopicArn()}
	api, err := addAPI(stack, cfg, function{
		id: "Handler", fn: rezagentcontract.API,
		// Create (put), get, status changes (update), lists by stage and
		// status, metrics (queries on both indexes): no delete, no scan.
		tables: []access{{messages, rezagentcontract.EnvTable, exactly(
			[]string{ddbGet, ddbPut, ddbUpdate}, rezagentcontract.IndexStageCreatedDate, rezagentcontract.IndexStatusCreatedDate)}},
		env: publishEnv,
	}, nil)
	if err != nil {
		return err
	}
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
		Target:                  processor.Function,
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
