package awsloop_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm/agenticpmapi"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/dynastack/dynastack/lambdas/services/nucleus/executor"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
	"github.com/dynastack/dynastack/lambdas/services/rezagent/processor"
)

// sameRequest fails unless the runtime's call (platform/awsrpc, through
// the function code that makes it) sent what the SDK's client sent for the
// same operation: the operation, its parameters or JSON body, and the
// signing scope.
func sameRequest(t *testing.T, fake *awsloop.Server, action string, sdk func() error, runtime func()) {
	t.Helper()
	fake.Reset()
	if err := sdk(); err != nil {
		t.Fatalf("%s through the SDK: %v", action, err)
	}
	runtime()
	calls := fake.CallsOf(action)
	if len(calls) != 2 {
		t.Fatalf("%s: %d calls, want the SDK's and the runtime's", action, len(calls))
	}
	want, got := calls[0], calls[1]
	if !reflect.DeepEqual(want.Params, got.Params) {
		t.Errorf("%s parameters: the SDK sent %v, the runtime %v", action, want.Params, got.Params)
	}
	if len(want.Body)+len(got.Body) > 0 {
		var w, g any
		if json.Unmarshal(want.Body, &w) != nil || json.Unmarshal(got.Body, &g) != nil || !reflect.DeepEqual(w, g) {
			t.Errorf("%s body: the SDK sent %s, the runtime %s", action, want.Body, got.Body)
		}
	}
	if want.SigningName != got.SigningName || want.Region != got.Region || want.AccessKeyID != got.AccessKeyID || want.SessionToken != got.SessionToken {
		t.Errorf("%s signed as %s/%s/%s (token %q), the SDK as %s/%s/%s (token %q)", action,
			got.AccessKeyID, got.Region, got.SigningName, got.SessionToken, want.AccessKeyID, want.Region, want.SigningName, want.SessionToken)
	}
}

// TestRuntimeCallsMatchTheSDK: every AWS operation a function makes
// through platform/awsrpc instead of the SDK's client (Nucleus's STS, EC2,
// RDS and ECS calls, rez_agent's SNS publish and SSM token read) sends the
// request the SDK's client sends for it, and AgenticPM's PutEvents and KMS
// Encrypt too. The fakes these tests check against the SDK decode both.
func TestRuntimeCallsMatchTheSDK(t *testing.T) {
	ctx := context.Background()
	stsFake, ec2Fake, rdsFake, ecsFake := awsloop.NewSTS(), awsloop.NewEC2(), awsloop.NewRDS(), awsloop.NewECS()
	snsFake, ssmFake := awsloop.NewSNS(), awsloop.NewSSM()
	for _, s := range []interface {
		Start() error
		Close() error
	}{stsFake, ec2Fake, rdsFake, ecsFake, snsFake, ssmFake} {
		start(t, s)
	}
	const roleARN = "arn:aws:iam::123456789012:role/nucleus-executor"
	stsFake.Trust(roleARN, "")
	ec2Fake.AcceptUnknown()
	ecsFake.AddService("prod", "web", 2)

	base := awsloop.Config("AKIDEXECUTOR")
	cloud := nucleus.NewCloudFromConfig(base, map[string]string{
		nucleus.EnvEndpointSTS: stsFake.URL(), nucleus.EnvEndpointEC2: ec2Fake.URL(),
		nucleus.EnvEndpointRDS: rdsFake.URL(), nucleus.EnvEndpointECS: ecsFake.URL(),
	})
	stsClient := sts.NewFromConfig(base, func(o *sts.Options) { o.BaseEndpoint = aws.String(stsFake.URL()) })
	var role *nucleus.Role
	sameRequest(t, stsFake.Server, "AssumeRole", func() error {
		_, err := stsClient.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String(nucleuscontract.ExecutorName)})
		return err
	}, func() {
		var err error
		if role, err = cloud.Assume(ctx, roleARN, "", nucleuscontract.ExecutorName); err != nil {
			t.Fatal(err)
		}
	})

	// The role's calls: the SDK client signs with the credentials STS
	// gave the runtime's Assume, as the executor's clients do.
	roleCfg := cloud.Regional(role, "eu-west-1")
	sameRequest(t, stsFake.Server, "GetCallerIdentity", func() error {
		_, err := sts.NewFromConfig(roleCfg, func(o *sts.Options) { o.BaseEndpoint = aws.String(stsFake.URL()); o.Region = awsloop.Region }).
			GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		return err
	}, func() {
		if _, err := cloud.CallerIdentity(ctx, role); err != nil {
			t.Fatal(err)
		}
	})

	act := func(typ nucleus.ResourceType, resource string, start bool, previous *int32) func() {
		return func() {
			out := executor.Act(ctx, nucleus.ResourceAction{Cloud: cloud, Role: role, Type: typ, Region: "eu-west-1", Resource: resource, Start: start, PreviousDesiredCount: previous})
			if out.Status != nucleus.StatusSuccess {
				t.Fatalf("%s %s start=%v: %+v", typ, resource, start, out)
			}
		}
	}
	ec2Client := ec2.NewFromConfig(roleCfg, func(o *ec2.Options) { o.BaseEndpoint = aws.String(ec2Fake.URL()) })
	const instance = "i-0123456789abcdef0"
	sameRequest(t, ec2Fake.Server, "StartInstances", func() error {
		_, err := ec2Client.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{instance}})
		return err
	}, act(nucleus.ResourceEC2, "instance/"+instance, true, nil))
	sameRequest(t, ec2Fake.Server, "StopInstances", func() error {
		_, err := ec2Client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{instance}})
		return err
	}, act(nucleus.ResourceEC2, "instance/"+instance, false, nil))

	// Each RDS call needs its resource in the state it changes, before the
	// SDK's call and again before the runtime's.
	rdsClient := rds.NewFromConfig(roleCfg, func(o *rds.Options) { o.BaseEndpoint = aws.String(rdsFake.URL()) })
	for _, c := range []struct {
		action, resource string
		start, cluster   bool
		sdk              func() error
	}{
		{"StopDBInstance", "db:orders", false, false, func() error {
			_, err := rdsClient.StopDBInstance(ctx, &rds.StopDBInstanceInput{DBInstanceIdentifier: aws.String("orders")})
			return err
		}},
		{"StartDBInstance", "db:orders", true, false, func() error {
			_, err := rdsClient.StartDBInstance(ctx, &rds.StartDBInstanceInput{DBInstanceIdentifier: aws.String("orders")})
			return err
		}},
		{"StopDBCluster", "cluster:reports", false, true, func() error {
			_, err := rdsClient.StopDBCluster(ctx, &rds.StopDBClusterInput{DBClusterIdentifier: aws.String("reports")})
			return err
		}},
		{"StartDBCluster", "cluster:reports", true, true, func() error {
			_, err := rdsClient.StartDBCluster(ctx, &rds.StartDBClusterInput{DBClusterIdentifier: aws.String("reports")})
			return err
		}},
	} {
		from := awsloop.DBAvailable
		if c.start {
			from = awsloop.DBStopped
		}
		set := func() {
			if c.cluster {
				rdsFake.AddCluster("reports", from)
			} else {
				rdsFake.AddInstance("orders", from)
			}
		}
		set()
		sameRequest(t, rdsFake.Server, c.action, func() error {
			err := c.sdk()
			set()
			return err
		}, act(nucleus.ResourceRDS, c.resource, c.start, nil))
	}

	ecsClient := ecs.NewFromConfig(roleCfg, func(o *ecs.Options) { o.BaseEndpoint = aws.String(ecsFake.URL()) })
	sameRequest(t, ecsFake.Server, "UpdateService", func() error {
		_, err := ecsClient.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("prod"), Service: aws.String("web"), DesiredCount: aws.Int32(2)})
		return err
	}, act(nucleus.ResourceECS, "service/prod/web", true, aws.Int32(2)))
	sameRequest(t, ecsFake.Server, "DescribeServices", func() error {
		_, err := ecsClient.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("prod"), Services: []string{"web"}})
		return err
	}, act(nucleus.ResourceECS, "service/prod/web", true, nil)) // running, no stored count: describe only

	// rez_agent, with its function's environment.
	env := map[string]string{"AWS_ACCESS_KEY_ID": "AKIDREZ", "AWS_SECRET_ACCESS_KEY": "secret-of-AKIDREZ",
		"AWS_REGION": awsloop.Region, "AWS_ENDPOINT_URL_SNS": snsFake.URL(), "AWS_ENDPOINT_URL_SSM": ssmFake.URL()}
	getenv := func(k string) string { return env[k] }
	const topic = "arn:aws:sns:us-east-1:123456789012:rez-agent-messages"
	snsFake.AddTopic(topic, func(awsloop.Publication) {})
	attrs := map[string]string{"message_type": "web_action", "correlation_id": "c-1"}
	sdkAttrs := map[string]snstypes.MessageAttributeValue{}
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		sdkAttrs[k] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(attrs[k])}
	}
	pub, err := rezagent.NewSNSClient(ctx, getenv)
	if err != nil {
		t.Fatal(err)
	}
	rezCfg := awsloop.Config("AKIDREZ")
	sameRequest(t, snsFake.Server, "Publish", func() error {
		_, err := sns.NewFromConfig(rezCfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(snsFake.URL()) }).
			Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(`{"message_id":"m-1"}`), MessageAttributes: sdkAttrs})
		return err
	}, func() {
		if err := pub.Publish(ctx, topic, `{"message_id":"m-1"}`, attrs); err != nil {
			t.Fatal(err)
		}
	})

	const param = "/rez-agent/dev/ntfy-token"
	ssmFake.PutSecureString(param, "tk_secret")
	sameRequest(t, ssmFake.Server, "GetParameter", func() error {
		_, err := ssm.NewFromConfig(rezCfg, func(o *ssm.Options) { o.BaseEndpoint = aws.String(ssmFake.URL()) }).
			GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(param), WithDecryption: aws.Bool(true)})
		return err
	}, func() {
		if tok, err := processor.ReadToken(ctx, getenv, param); err != nil || tok != "tk_secret" {
			t.Fatalf("ReadToken: %q %v", tok, err)
		}
	})

	// AgenticPM: the release's PutEvents, the API's KMS Encrypt.
	const bus = "agenticpm-dev"
	events := awsloop.NewEvents(bus)
	start(t, events)
	entry := agenticpm.EventEntry{EventBusName: bus, Source: agenticpm.EventSource, DetailType: agenticpm.EventDetailType, Detail: `{"idempotencyKey":"k"}`}
	sameRequest(t, events.Server, "PutEvents", func() error {
		_, err := eventbridge.NewFromConfig(awsloop.ConfigAt("AKIDAPM", events.URL())).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
			EventBusName: aws.String(entry.EventBusName), Source: aws.String(entry.Source), DetailType: aws.String(entry.DetailType), Detail: aws.String(entry.Detail)}}})
		return err
	}, func() {
		res, err := agenticpm.NewEvents(awsloop.ConfigAt("AKIDAPM", events.URL())).PutEvents(ctx, []agenticpm.EventEntry{entry})
		if err != nil || len(res) != 1 || res[0].EventID == "" || res[0].ErrorCode != "" {
			t.Fatalf("PutEvents: %+v %v", res, err)
		}
	})

	// KMS answers Encrypt with a fixed ciphertext: what matters is the
	// request, and that both read the answer alike.
	kmsFake := awsloop.NewServer(awsloop.Service{Name: "kms", Protocol: awsloop.AWSJSON11, TargetPrefix: "TrentService"})
	const keyARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	kmsFake.Handle("Encrypt", func(c *awsloop.Call) (any, error) {
		return map[string]any{"CiphertextBlob": []byte("sealed\x00\xff"), "KeyId": keyARN, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"}, nil
	})
	start(t, kmsFake)
	plaintext, ec := []byte(`{"token":"t"}`), map[string]string{"integration": "jira", "stage": "dev"}
	var sdkBlob []byte
	sameRequest(t, kmsFake, "Encrypt", func() error {
		out, err := kms.NewFromConfig(awsloop.ConfigAt("AKIDAPM", kmsFake.URL())).Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String("alias/agenticpm-dev-credentials"), Plaintext: plaintext, EncryptionContext: ec})
		if err == nil {
			sdkBlob = out.CiphertextBlob
		}
		return err
	}, func() {
		blob, key, err := agenticpmapi.KMS(awsloop.ConfigAt("AKIDAPM", kmsFake.URL())).Encrypt(ctx, "alias/agenticpm-dev-credentials", plaintext, ec)
		if err != nil || string(blob) != string(sdkBlob) || key != keyARN {
			t.Fatalf("Encrypt: %q %s %v, the SDK read %q", blob, key, err, sdkBlob)
		}
	})
}
