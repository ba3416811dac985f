package awsloop_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	rdstypes "github.com/aws/aws-sdk-go-v2/service/rds/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sdkCase is one operation a function calls, made by the SDK's own client
// against the loopback server of its service.
type sdkCase struct {
	name string
	// id is the SDK package's ServiceID: the client's configuration comes
	// from awsconf.For with it, as the function's does, so the server is
	// reached only if its Service.ID names the same endpoint variable.
	id     string
	action string
	// fake starts the server, in a state the call succeeds in.
	fake func(t *testing.T) *awsloop.Server
	// send makes the call as the function makes it; check reads its
	// typed output.
	send  func(ctx context.Context, cfg aws.Config) (any, error)
	check func(t *testing.T, out any)
	// refuse makes the call the service refuses with the error the
	// function's code reads, and checks that error.
	refuse func(ctx context.Context, t *testing.T, cfg aws.Config, srv *awsloop.Server)
	// throttled is what the function makes of a throttle that outlasts
	// the SDK's retries; nil when any error is handled alike.
	throttled func(t *testing.T, err error)
}

const (
	sdkKey     = "AKIDSDK"
	sdkRole    = "arn:aws:iam::111122223333:role/nucleus-executor-dev"
	sdkRoleExt = "tenant-42"
	instanceID = "i-0123456789abcdef0"
	topicARN   = "arn:aws:sns:us-east-1:111122223333:rez-agent-messages-dev"
	tokenName  = "/rez-agent/dev/ntfy-token"
	keyAlias   = "alias/agenticpm-dev-credentials"
	keyARN     = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
)

// TestSDKAgainstTheLoopbackServers holds the loopback servers to the
// SDK's own clients, for every operation the functions call: a success
// decodes to the typed output; the service error the function's code
// reads (Nucleus's audit entry records every code, rez_agent and
// AgenticPM branch on some) arrives as the SDK's typed error, or its
// smithy.APIError code where the SDK models none; a throttle, the
// protocol's own, is retried by the SDK's standard retryer, and one that
// outlasts it is an error the retryer took for a throttle, with its code,
// and what the function makes of it. The clients are configured as the
// functions' are (awsconf.For with the SDK's ServiceID), with the SDK's
// standard retryer less its backoff (awsloop.NoBackoff), and every server verifies
// their signatures.
func TestSDKAgainstTheLoopbackServers(t *testing.T) {
	auditsCode := func(t *testing.T, err error) {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			assert.Equal(t, ae.ErrorCode(), nucleus.DescribeError(err).Code, "the audit entry records %+v", nucleus.DescribeError(err))
		}
	}
	for _, c := range []sdkCase{
		{
			name: "STS AssumeRole", id: sts.ServiceID, action: "AssumeRole",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewSTS()
				f.Trust(sdkRole, sdkRoleExt)
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(sdkRole),
					RoleSessionName: aws.String(nucleuscontract.ExecutorName), ExternalId: aws.String(sdkRoleExt)})
			},
			check: func(t *testing.T, out any) {
				o := out.(*sts.AssumeRoleOutput)
				cr := o.Credentials
				if assert.NotNil(t, cr, "credentials") {
					assert.True(t, strings.HasPrefix(aws.ToString(cr.AccessKeyId), "ASIA"), "credentials key %s", aws.ToString(cr.AccessKeyId))
					assert.NotEmpty(t, aws.ToString(cr.SecretAccessKey), "credentials secret")
					assert.NotEmpty(t, aws.ToString(cr.SessionToken), "credentials session token")
					if assert.NotNil(t, cr.Expiration, "credentials expiration") {
						assert.True(t, cr.Expiration.After(time.Now()), "credentials expired at %v", cr.Expiration)
					}
				}
				assert.Equal(t, "arn:aws:sts::111122223333:assumed-role/nucleus-executor-dev/"+nucleuscontract.ExecutorName, aws.ToString(o.AssumedRoleUser.Arn), "assumed role")
			},
			// A trust policy whose external id the account's item does
			// not match: the connection test's FAIL, the executor's.
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(sdkRole),
					RoleSessionName: aws.String(nucleus.SessionTest), ExternalId: aws.String("another-tenant")})
				wantCode(t, err, "AccessDenied", http.StatusForbidden)
				auditsCode(t, err)
			},
			throttled: auditsCode,
		},
		{
			name: "STS GetCallerIdentity", id: sts.ServiceID, action: "GetCallerIdentity",
			fake: func(t *testing.T) *awsloop.Server { return started(t, awsloop.NewSTS().Server) },
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
			},
			check: func(t *testing.T, out any) {
				o := out.(*sts.GetCallerIdentityOutput)
				assert.Equal(t, "arn:aws:iam::000000000000:user/"+sdkKey, aws.ToString(o.Arn), "identity ARN")
				assert.Equal(t, "000000000000", aws.ToString(o.Account), "identity account")
			},
			// Credentials STS no longer honours (a revoked session).
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, srv *awsloop.Server) {
				srv.Inject("GetCallerIdentity", 1, &awsloop.Error{Status: http.StatusForbidden, Code: "InvalidClientTokenId", Message: "The security token included in the request is invalid."})
				_, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
				wantCode(t, err, "InvalidClientTokenId", http.StatusForbidden)
				auditsCode(t, err)
			},
			throttled: auditsCode,
		},
		{
			name: "EC2 StartInstances", id: ec2.ServiceID, action: "StartInstances",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewEC2()
				f.AddInstance(instanceID, awsloop.InstanceStopped)
				f.AddInstance("i-0123456789abcdef1", awsloop.InstanceTerminated)
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return ec2.NewFromConfig(cfg).StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{instanceID}})
			},
			check: func(t *testing.T, out any) {
				ch := out.(*ec2.StartInstancesOutput).StartingInstances
				if assert.Len(t, ch, 1, "starting %s", instanceChanges(ch)) {
					assert.Equal(t, instanceID, aws.ToString(ch[0].InstanceId), "starting instance")
					assert.Equal(t, ec2types.InstanceStateName("stopped"), ch[0].PreviousState.Name, "starting: previous state")
					assert.Equal(t, ec2types.InstanceStateName("pending"), ch[0].CurrentState.Name, "starting: current state")
				}
			},
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := ec2.NewFromConfig(cfg).StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{"i-00000000000000000"}})
				wantCode(t, err, "InvalidInstanceID.NotFound", http.StatusBadRequest)
				auditsCode(t, err)
			},
			throttled: auditsCode,
		},
		{
			name: "EC2 StopInstances", id: ec2.ServiceID, action: "StopInstances",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewEC2()
				f.AddInstance(instanceID, awsloop.InstanceRunning)
				f.AddInstance("i-0123456789abcdef1", awsloop.InstanceTerminated)
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return ec2.NewFromConfig(cfg).StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{instanceID}})
			},
			check: func(t *testing.T, out any) {
				ch := out.(*ec2.StopInstancesOutput).StoppingInstances
				if assert.Len(t, ch, 1, "stopping %s", instanceChanges(ch)) {
					assert.Equal(t, ec2types.InstanceStateName("running"), ch[0].PreviousState.Name, "stopping: previous state")
					assert.Equal(t, ec2types.InstanceStateName("stopping"), ch[0].CurrentState.Name, "stopping: current state")
				}
			},
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := ec2.NewFromConfig(cfg).StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0123456789abcdef1"}})
				wantCode(t, err, "IncorrectInstanceState", http.StatusBadRequest)
				auditsCode(t, err)
			},
			throttled: auditsCode,
		},
		{
			name: "RDS StartDBInstance", id: rds.ServiceID, action: "StartDBInstance",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewRDS()
				f.AddInstance("orders", awsloop.DBStopped)
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return rds.NewFromConfig(cfg).StartDBInstance(ctx, &rds.StartDBInstanceInput{DBInstanceIdentifier: aws.String("orders")})
			},
			check: func(t *testing.T, out any) {
				db := out.(*rds.StartDBInstanceOutput).DBInstance
				if assert.NotNil(t, db, "instance") {
					assert.Equal(t, awsloop.DBStarting, aws.ToString(db.DBInstanceStatus), "instance status")
				}
			},
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := rds.NewFromConfig(cfg).StartDBInstance(ctx, &rds.StartDBInstanceInput{DBInstanceIdentifier: aws.String("gone")})
				wantTyped[*rdstypes.DBInstanceNotFoundFault](t, err)
				auditsCode(t, err)
			},
			throttled: auditsCode,
		},
		{
			name: "RDS StopDBInstance", id: rds.ServiceID, action: "StopDBInstance",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewRDS()
				f.AddInstance("orders", awsloop.DBAvailable)
				f.AddInstance("stopped", awsloop.DBStopped)
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return rds.NewFromConfig(cfg).StopDBInstance(ctx, &rds.StopDBInstanceInput{DBInstanceIdentifier: aws.String("orders")})
			},
			check: func(t *testing.T, out any) {
				db := out.(*rds.StopDBInstanceOutput).DBInstance
				if assert.NotNil(t, db, "instance") {
					assert.Equal(t, awsloop.DBStopping, aws.ToString(db.DBInstanceStatus), "instance status")
				}
			},
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := rds.NewFromConfig(cfg).StopDBInstance(ctx, &rds.StopDBInstanceInput{DBInstanceIdentifier: aws.String("stopped")})
				wantTyped[*rdstypes.InvalidDBInstanceStateFault](t, err)
				auditsCode(t, err)
			},
			throttled: auditsCode,
		},
		{
			name: "RDS StartDBCluster", id: rds.ServiceID, action: "StartDBCluster",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewRDS()
				f.AddCluster("reports", awsloop.DBStopped)
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return rds.NewFromConfig(cfg).StartDBCluster(ctx, &rds.StartDBClusterInput{DBClusterIdentifier: aws.String("reports")})
			},
			check: func(t *testing.T, out any) {
				cl := out.(*rds.StartDBClusterOutput).DBCluster
				if assert.NotNil(t, cl, "cluster") {
					assert.Equal(t, awsloop.DBStarting, aws.ToString(cl.Status), "cluster status")
				}
			},
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := rds.NewFromConfig(cfg).StartDBCluster(ctx, &rds.StartDBClusterInput{DBClusterIdentifier: aws.String("gone")})
				wantTyped[*rdstypes.DBClusterNotFoundFault](t, err)
				auditsCode(t, err)
			},
			throttled: auditsCode,
		},
		{
			name: "RDS StopDBCluster", id: rds.ServiceID, action: "StopDBCluster",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewRDS()
				f.AddCluster("reports", awsloop.DBAvailable)
				f.AddCluster("stopped", awsloop.DBStopped)
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return rds.NewFromConfig(cfg).StopDBCluster(ctx, &rds.StopDBClusterInput{DBClusterIdentifier: aws.String("reports")})
			},
			check: func(t *testing.T, out any) {
				cl := out.(*rds.StopDBClusterOutput).DBCluster
				if assert.NotNil(t, cl, "cluster") {
					assert.Equal(t, awsloop.DBStopping, aws.ToString(cl.Status), "cluster status")
				}
			},
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := rds.NewFromConfig(cfg).StopDBCluster(ctx, &rds.StopDBClusterInput{DBClusterIdentifier: aws.String("stopped")})
				wantTyped[*rdstypes.InvalidDBClusterStateFault](t, err)
				auditsCode(t, err)
			},
			throttled: auditsCode,
		},
		{
			name: "ECS DescribeServices", id: ecs.ServiceID, action: "DescribeServices",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewECS()
				f.AddService("prod", "web", 3)
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return ecs.NewFromConfig(cfg).DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("prod"), Services: []string{"web", "api"}})
			},
			// The executor reads the desired count, and a missing
			// service's failure reason.
			check: func(t *testing.T, out any) {
				o := out.(*ecs.DescribeServicesOutput)
				if assert.Len(t, o.Services, 1, "services") {
					assert.Equal(t, int32(3), o.Services[0].DesiredCount, "desired count")
				}
				if assert.Len(t, o.Failures, 1, "failures") {
					assert.Equal(t, "MISSING", aws.ToString(o.Failures[0].Reason), "failure reason")
				}
			},
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := ecs.NewFromConfig(cfg).DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("staging"), Services: []string{"web"}})
				wantTyped[*ecstypes.ClusterNotFoundException](t, err)
				auditsCode(t, err)
			},
			throttled: auditsCode,
		},
		{
			name: "ECS UpdateService", id: ecs.ServiceID, action: "UpdateService",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewECS()
				f.AddService("prod", "web", 3)
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return ecs.NewFromConfig(cfg).UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("prod"), Service: aws.String("web"), DesiredCount: aws.Int32(0)})
			},
			check: func(t *testing.T, out any) {
				s := out.(*ecs.UpdateServiceOutput).Service
				if assert.NotNil(t, s, "service") {
					assert.Equal(t, int32(0), s.DesiredCount, "desired count")
					assert.Equal(t, "web", aws.ToString(s.ServiceName), "service name")
				}
			},
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := ecs.NewFromConfig(cfg).UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("prod"), Service: aws.String("api"), DesiredCount: aws.Int32(1)})
				wantTyped[*ecstypes.ServiceNotFoundException](t, err)
				auditsCode(t, err)
			},
			throttled: auditsCode,
		},
		{
			// A failed publish leaves the message created, for the
			// scheduler's republish, whatever the error.
			name: "SNS Publish", id: sns.ServiceID, action: "Publish",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewSNS()
				f.AddTopic(topicARN, func(awsloop.Publication) {})
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return sns.NewFromConfig(cfg).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topicARN), Message: aws.String(`{"message_id":"m-1"}`),
					MessageAttributes: map[string]snstypes.MessageAttributeValue{"message_type": {DataType: aws.String("String"), StringValue: aws.String("web_action")}}})
			},
			check: func(t *testing.T, out any) {
				assert.NotEmpty(t, aws.ToString(out.(*sns.PublishOutput).MessageId), "MessageId")
			},
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := sns.NewFromConfig(cfg).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topicARN + "-gone"), Message: aws.String("{}")})
				wantTyped[*snstypes.NotFoundException](t, err)
			},
		},
		{
			// The processor reads its token at init: any error fails the
			// start, and Lambda starts it again.
			name: "SSM GetParameter", id: ssm.ServiceID, action: "GetParameter",
			fake: func(t *testing.T) *awsloop.Server {
				f := awsloop.NewSSM()
				f.PutSecureString(tokenName, "tk_secret")
				return started(t, f.Server)
			},
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return ssm.NewFromConfig(cfg).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(tokenName), WithDecryption: aws.Bool(true)})
			},
			check: func(t *testing.T, out any) {
				p := out.(*ssm.GetParameterOutput).Parameter
				if assert.NotNil(t, p, "parameter") {
					assert.Equal(t, "tk_secret", aws.ToString(p.Value), "parameter value")
					assert.Equal(t, ssmtypes.ParameterTypeSecureString, p.Type, "parameter type")
				}
			},
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := ssm.NewFromConfig(cfg).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/rez-agent/dev/none"), WithDecryption: aws.Bool(true)})
				wantTyped[*ssmtypes.ParameterNotFound](t, err)
			},
		},
		{
			// A release whose PutEvents fails stays in the outbox, for the
			// release job's next run, whatever the error.
			name: "EventBridge PutEvents", id: eventbridge.ServiceID, action: "PutEvents",
			fake: func(t *testing.T) *awsloop.Server { return started(t, awsloop.NewEvents("agenticpm-dev").Server) },
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return eventbridge.NewFromConfig(cfg).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
					EventBusName: aws.String("agenticpm-dev"), Source: aws.String("dynastack.agenticpm"), DetailType: aws.String("ActionReleased"), Detail: aws.String(`{"idempotencyKey":"k"}`)}}})
			},
			check: func(t *testing.T, out any) {
				o := out.(*eventbridge.PutEventsOutput)
				assert.Equal(t, int32(0), o.FailedEntryCount, "FailedEntryCount")
				if assert.Len(t, o.Entries, 1, "entries") {
					assert.NotEmpty(t, aws.ToString(o.Entries[0].EventId), "event id")
				}
			},
			// PutEvents refuses entries, not the call: the release reads
			// each entry's ErrorCode.
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				out, err := eventbridge.NewFromConfig(cfg).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
					EventBusName: aws.String("gone"), Source: aws.String("dynastack.agenticpm"), DetailType: aws.String("ActionReleased"), Detail: aws.String("{}")}}})
				if assert.NoError(t, err, "PutEvents to a missing bus") {
					assert.Equal(t, int32(1), out.FailedEntryCount, "PutEvents to a missing bus: FailedEntryCount")
					if assert.NotEmpty(t, out.Entries, "PutEvents to a missing bus: entries") {
						assert.Equal(t, "ResourceNotFoundException", aws.ToString(out.Entries[0].ErrorCode), "PutEvents to a missing bus: error code")
					}
				}
			},
		},
		{
			name: "KMS Encrypt", id: kms.ServiceID, action: "Encrypt",
			fake: func(t *testing.T) *awsloop.Server { return started(t, kmsFake()) },
			send: func(ctx context.Context, cfg aws.Config) (any, error) {
				return kms.NewFromConfig(cfg).Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(keyAlias), Plaintext: []byte(`{"token":"t"}`),
					EncryptionContext: map[string]string{"integration": "jira", "stage": "dev"}})
			},
			check: func(t *testing.T, out any) {
				o := out.(*kms.EncryptOutput)
				assert.Equal(t, []byte("sealed\x00\xff"), o.CiphertextBlob, "ciphertext")
				assert.Equal(t, keyARN, aws.ToString(o.KeyId), "key")
				assert.Equal(t, kmstypes.EncryptionAlgorithmSpecSymmetricDefault, o.EncryptionAlgorithm, "algorithm")
			},
			// A key deleted under the stage: a 500, not a retry.
			refuse: func(ctx context.Context, t *testing.T, cfg aws.Config, _ *awsloop.Server) {
				_, err := kms.NewFromConfig(cfg).Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String("alias/gone"), Plaintext: []byte("x")})
				wantTyped[*kmstypes.NotFoundException](t, err)
				assert.False(t, ddb.IsUnavailable(err), "NotFoundException taken for unavailable: %v", err)
			},
			// The credentials route answers 503 with Retry-After.
			throttled: func(t *testing.T, err error) {
				assert.True(t, ddb.IsUnavailable(err), "a throttled Encrypt is not unavailable (503): %v", err)
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			// fresh is a new server in the state the call succeeds in,
			// and a client configuration for it: each step changes the
			// state of a stateful fake (an instance started).
			fresh := func() (*awsloop.Server, aws.Config) {
				srv := c.fake(t)
				require.Equal(t, c.id, srv.Service().ID, "the server's service ID against the SDK's")
				srv.VerifySignatures(awsloop.ConfigSecrets)
				secret, _, _ := awsloop.ConfigSecrets(sdkKey)
				env := map[string]string{srv.Service().EndpointEnv(): srv.URL(), "AWS_ACCESS_KEY_ID": sdkKey, "AWS_SECRET_ACCESS_KEY": secret}
				cfg, err := awsconf.For(ctx, func(k string) string { return env[k] }, c.id)
				require.NoError(t, err)
				cfg.Retryer = awsloop.NoBackoff
				return srv, cfg
			}

			srv, cfg := fresh()
			out, err := c.send(ctx, cfg)
			require.NoError(t, err, "success")
			c.check(t, out)
			c.refuse(ctx, t, cfg, srv)

			// A throttle the SDK rides out: one more attempt, and the
			// answer of the second.
			srv, cfg = fresh()
			throttle := srv.Service().Throttle()
			srv.Inject(c.action, 1, throttle)
			out, err = c.send(ctx, cfg)
			require.NoError(t, err, "after one throttle")
			c.check(t, out)
			assert.Len(t, srv.CallsOf(c.action), 2, "one throttle: attempts")

			// One that outlasts the retryer's attempts.
			srv, cfg = fresh()
			srv.Inject(c.action, -1, throttle)
			_, err = c.send(ctx, cfg)
			assert.Len(t, srv.CallsOf(c.action), retry.DefaultMaxAttempts, "a lasting throttle: attempts, want the retryer's")
			var maxAttempts *retry.MaxAttemptsError
			assert.ErrorAs(t, err, &maxAttempts, "a lasting throttle: want the retryer's attempts spent")
			assert.Equal(t, aws.TrueTernary, retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err), "a lasting throttle: %v, want a throttle", err)
			wantCode(t, err, throttle.Code, throttle.Status)
			if c.throttled != nil {
				c.throttled(t, err)
			}
		})
	}
}

// instanceChanges prints EC2's state changes.
func instanceChanges(ch []ec2types.InstanceStateChange) string {
	var b strings.Builder
	for _, c := range ch {
		fmt.Fprintf(&b, "%s %+v → %+v; ", aws.ToString(c.InstanceId), c.PreviousState, c.CurrentState)
	}
	return b.String()
}

// started starts srv for the test.
func started(t *testing.T, srv *awsloop.Server) *awsloop.Server {
	t.Helper()
	start(t, srv)
	return srv
}

// kmsFake answers Encrypt for keyAlias with a fixed ciphertext (Local KMS,
// devtools/kmslocal, serves make dev and the service tests; this server
// is for what it cannot be made to answer), and NotFoundException for any
// other key.
func kmsFake() *awsloop.Server {
	srv := awsloop.NewServer(awsloop.KMSService)
	srv.Handle("Encrypt", func(c *awsloop.Call) (any, error) {
		var in struct {
			KeyID     string `json:"KeyId"`
			Plaintext []byte
		}
		if err := c.Decode(&in); err != nil {
			return nil, err
		}
		if in.KeyID != keyAlias {
			return nil, awsloop.ClientError("NotFoundException", "Alias arn:aws:kms:us-east-1:111122223333:%s is not found.", in.KeyID)
		}
		return map[string]any{"CiphertextBlob": []byte("sealed\x00\xff"), "KeyId": keyARN, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"}, nil
	})
	return srv
}

// wantCode fails unless err is an answer of status with AWS error code.
func wantCode(t *testing.T, err error, code string, status int) {
	t.Helper()
	var ae smithy.APIError
	var re *awshttp.ResponseError
	if !assert.ErrorAs(t, err, &ae, "want AWS error %s", code) || !assert.Equal(t, code, ae.ErrorCode(), "AWS error of %v", err) {
		return
	}
	if assert.ErrorAs(t, err, &re, "want HTTP %d", status) {
		assert.Equal(t, status, re.HTTPStatusCode(), "HTTP status of %v", err)
	}
}

// wantTyped fails unless err is the SDK's modeled error E.
func wantTyped[E error](t *testing.T, err error) {
	t.Helper()
	var e E
	assert.ErrorAs(t, err, &e, "%T: want the SDK's %T", err, e)
}
