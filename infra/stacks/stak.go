package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/constructs/stak"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/infra/config"
)

// Stream consumer settings: batches are retried at most 10 times, halved on
// error so one poisoned record cannot block the shard, and given up after
// 6 hours (then described on the failure queue for a human). Not 24: the
// on-failure message names the batch's place in the stream, not its
// records, so a batch must be given up while the stream still holds it
// (24 hours) for stak-replay to read it again (docs/schemas/stak.md,
// "Runbook: replay").
const (
	stakStreamBatchSize   = 100
	stakStreamWindowSecs  = 5
	stakStreamRetries     = 10
	stakStreamMaxAgeHours = 6
)

// The drift check runs hourly (issue 30: a sample an hour bounds its
// reads, docs/schemas/stak.md "Drift check"), with a timeout above its
// 40 s run bound (stak.DriftRunTime, the settle wait included).
const (
	stakDriftSchedule       = "rate(1 hour)"
	stakDriftTimeoutSeconds = 60
)

func buildStak(stack awscdk.Stack, cfg config.Stage) error {
	inbox, err := stak.NewInboxTable(stack, "Inbox", props(cfg, stakcontract.Name, "Inbox"))
	if err != nil {
		return err
	}
	tokens, err := cfg.StakTokensFor()
	if err != nil {
		return err
	}
	if _, err := addAPI(stack, cfg, function{
		id: "Handler", fn: stakcontract.API,
		tables: []access{{inbox, stakcontract.EnvTable, exactly([]string{ddbCheck, ddbGet, ddbPut, ddbQuery, ddbUpdate})}},
	}, &tokenIssuer{issuer: tokens.Issuer, audience: tokens.Audience}); err != nil {
		return err
	}
	// The consumer reads the stream and writes counters (in transactions,
	// with a marker item per event for idempotency): put and update, never
	// delete.
	consumer, err := addFunction(stack, cfg, function{
		id: "StreamConsumer", fn: stakcontract.StreamConsumer,
		tables: []access{{inbox, stakcontract.EnvTable, exactly([]string{ddbPut, ddbUpdate})}},
	})
	if err != nil {
		return err
	}
	if _, err := inbox.GrantStreamRead(consumer.Function); err != nil {
		return err
	}
	failures := awssqs.NewQueue(stack, jsii.String("StreamFailures"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		RemovalPolicy:   gofunction.LogRemovalPolicy(cfg.Name),
	})
	awslambda.NewEventSourceMapping(stack, jsii.String("StreamMapping"), &awslambda.EventSourceMappingProps{
		Target:                  live(consumer),
		EventSourceArn:          inbox.Resource.TableStreamArn(),
		StartingPosition:        awslambda.StartingPosition_LATEST,
		BatchSize:               jsii.Number(stakStreamBatchSize),
		MaxBatchingWindow:       awscdk.Duration_Seconds(jsii.Number(stakStreamWindowSecs)),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(stakStreamRetries),
		MaxRecordAge:            awscdk.Duration_Hours(jsii.Number(stakStreamMaxAgeHours)),
		ReportBatchItemFailures: jsii.Bool(true),
		OnFailure:               awslambdaeventsources.NewSqsDlq(failures),
		// Only TTL deletions of messages and receipts (sort key m#…) invoke
		// the consumer; the code applies the same rule too. The local
		// poller applies this filter after giving DynamoDB Local's TTL
		// deletions AWS's shape.
		Filters: &[]*map[string]any{awslambda.FilterCriteria_Filter(&map[string]any{
			"eventName": awslambda.FilterRule_IsEqual(jsii.String("REMOVE")),
			"userIdentity": map[string]any{
				"type":        awslambda.FilterRule_IsEqual(jsii.String("Service")),
				"principalId": awslambda.FilterRule_IsEqual(jsii.String("dynamodb.amazonaws.com")),
			},
			"dynamodb": map[string]any{"Keys": map[string]any{"sk": map[string]any{"S": awslambda.FilterRule_BeginsWith(jsii.String("m#"))}}},
		})},
	})
	alarmStreamConsumer(stack, "StreamConsumer", consumer.Function, failures)
	// The drift check reads only: Query (counters and items, as the
	// recount), and the sample's DescribeTable (the item count) and Scan of
	// one segment, keys only. Scan is granted here by hand, not through
	// GrantExactly, which refuses it: this is the one documented scan
	// (docs/schemas/stak.md, "Drift check"), bounded by its code to one
	// page of at most 2 × stak.DriftSampleItems items an hour.
	drift, err := addScheduled(stack, cfg, function{
		id: "DriftCheck", fn: stakcontract.DriftCheck, timeoutSeconds: stakDriftTimeoutSeconds,
		tables: []access{{inbox, stakcontract.EnvTable, exactly([]string{ddbQuery})}},
	}, config.Schedule{Expression: stakDriftSchedule})
	if err != nil {
		return err
	}
	inbox.Resource.Grant(drift.Function, jsii.String("dynamodb:DescribeTable"), jsii.String("dynamodb:Scan"))
	alarmCounterDrift(stack, "DriftCheck")
	suppress(consumer.Role, suppression{
		id:        "AwsSolutions-IAM5",
		reason:    "X-Ray (PutTraceSegments, PutTelemetryRecords) and dynamodb:ListStreams support no resource-level permissions, so their resource is *; every other statement names the table or its stream.",
		appliesTo: []string{"Resource::*"},
	})
	suppress(consumer.Function, suppression{
		id:     "Serverless-LambdaDLQ",
		reason: "Invoked by a stream event source mapping, never asynchronously: failed batches go to the mapping's on-failure SQS destination (StreamFailures).",
	})
	const lastStop = "This queue is itself the on-failure destination of the stream mapping, read by people, not by a consumer: a dead-letter queue or redrive behind it would only move the same records again."
	suppress(failures,
		suppression{id: "AwsSolutions-SQS3", reason: lastStop},
		suppression{id: "Serverless-SQSRedrivePolicy", reason: lastStop},
	)
	return nil
}
