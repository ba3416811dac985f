package awsloop_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	rdstypes "github.com/aws/aws-sdk-go-v2/service/rds/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func start(t *testing.T, s interface {
	Start() error
	Close() error
}) {
	t.Helper()
	require.NoError(t, s.Start())
	t.Cleanup(func() { _ = s.Close() })
}

func code(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

func TestEC2(t *testing.T) {
	fake := awsloop.NewEC2()
	start(t, fake)
	fake.AddInstance("i-0123456789abcdef0", awsloop.InstanceStopped)
	fake.AddInstance("i-0123456789abcdef1", awsloop.InstanceTerminated)
	cfg := awsloop.Config("AKIDEC2")
	cfg.Region = "eu-central-1"
	client := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = aws.String(fake.URL()) })
	ctx := context.Background()

	out, err := client.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	require.NoError(t, err)
	ch := out.StartingInstances[0]
	assert.Equal(t, "i-0123456789abcdef0", aws.ToString(ch.InstanceId), "StartingInstances: instance")
	assert.Equal(t, ec2types.InstanceStateNamePending, ch.CurrentState.Name, "StartingInstances: current state")
	assert.Equal(t, int32(0), aws.ToInt32(ch.CurrentState.Code), "StartingInstances: current state code")
	assert.Equal(t, ec2types.InstanceStateNameStopped, ch.PreviousState.Name, "StartingInstances: previous state")
	assert.Equal(t, int32(80), aws.ToInt32(ch.PreviousState.Code), "StartingInstances: previous state code")
	c := fake.CallsOf("StartInstances")[0]
	assert.Equal(t, []string{"i-0123456789abcdef0"}, c.List("InstanceId"), "call: instances")
	assert.Equal(t, "eu-central-1", c.Region, "call: region")
	assert.Equal(t, "AKIDEC2", c.AccessKeyID, "call: key")
	assert.Equal(t, awsloop.InstanceRunning, fake.State("i-0123456789abcdef0"), "state")
	stop, err := client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	require.NoError(t, err, "stop")
	require.Equal(t, ec2types.InstanceStateNameStopping, stop.StoppingInstances[0].CurrentState.Name, "stop: current state")
	for id, want := range map[string]string{
		"i-00000000000000000": "InvalidInstanceID.NotFound",
		"i-0123456789abcdef1": "IncorrectInstanceState",
		"vol-1":               "InvalidInstanceID.Malformed",
	} {
		_, err := client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{id}})
		assert.Equal(t, want, code(err), "stop %s: %v", id, err)
	}
}

func TestRDS(t *testing.T) {
	fake := awsloop.NewRDS()
	start(t, fake)
	fake.AddInstance("orders", awsloop.DBAvailable)
	fake.AddCluster("reports", awsloop.DBStopped)
	client := rds.NewFromConfig(awsloop.Config("AKIDRDS"), func(o *rds.Options) { o.BaseEndpoint = aws.String(fake.URL()) })
	ctx := context.Background()

	out, err := client.StopDBInstance(ctx, &rds.StopDBInstanceInput{DBInstanceIdentifier: aws.String("orders")})
	require.NoError(t, err, "StopDBInstance")
	require.Equal(t, awsloop.DBStopping, aws.ToString(out.DBInstance.DBInstanceStatus), "StopDBInstance: status")
	require.Equal(t, "orders", aws.ToString(out.DBInstance.DBInstanceIdentifier), "StopDBInstance: instance")
	c := fake.CallsOf("StopDBInstance")[0]
	assert.Equal(t, "orders", c.Get("DBInstanceIdentifier"), "call: instance")
	assert.Equal(t, "AKIDRDS", c.AccessKeyID, "call: key")
	_, err = client.StopDBInstance(ctx, &rds.StopDBInstanceInput{DBInstanceIdentifier: aws.String("orders")})
	var invalid *rdstypes.InvalidDBInstanceStateFault
	assert.ErrorAs(t, err, &invalid, "second stop")
	_, err = client.StartDBInstance(ctx, &rds.StartDBInstanceInput{DBInstanceIdentifier: aws.String("nope")})
	var notFound *rdstypes.DBInstanceNotFoundFault
	assert.ErrorAs(t, err, &notFound, "unknown instance")
	cl, err := client.StartDBCluster(ctx, &rds.StartDBClusterInput{DBClusterIdentifier: aws.String("reports")})
	require.NoError(t, err, "StartDBCluster")
	require.Equal(t, awsloop.DBStarting, aws.ToString(cl.DBCluster.Status), "StartDBCluster: status")
	require.Equal(t, awsloop.DBAvailable, fake.ClusterStatus("reports"), "StartDBCluster: the fake's status")
	_, err = client.StartDBCluster(ctx, &rds.StartDBClusterInput{DBClusterIdentifier: aws.String("reports")})
	var invalidCluster *rdstypes.InvalidDBClusterStateFault
	assert.ErrorAs(t, err, &invalidCluster, "second start")
	_, err = client.StopDBCluster(ctx, &rds.StopDBClusterInput{DBClusterIdentifier: aws.String("nope")})
	var clusterNotFound *rdstypes.DBClusterNotFoundFault
	assert.ErrorAs(t, err, &clusterNotFound, "unknown cluster")
}

func TestECS(t *testing.T) {
	fake := awsloop.NewECS()
	start(t, fake)
	fake.AddService("prod", "web", 3)
	client := ecs.NewFromConfig(awsloop.Config("AKIDECS"), func(o *ecs.Options) { o.BaseEndpoint = aws.String(fake.URL()) })
	ctx := context.Background()

	d, err := client.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("prod"), Services: []string{"web", "gone"}})
	require.NoError(t, err, "DescribeServices")
	require.Len(t, d.Services, 1, "DescribeServices: services")
	require.Equal(t, int32(3), d.Services[0].DesiredCount, "DescribeServices: desired count")
	require.Len(t, d.Failures, 1, "DescribeServices: failures")
	require.Equal(t, "MISSING", aws.ToString(d.Failures[0].Reason), "DescribeServices: failure reason")
	out, err := client.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("arn:aws:ecs:us-east-1:111122223333:cluster/prod"),
		Service: aws.String("web"), DesiredCount: aws.Int32(0)})
	require.NoError(t, err, "UpdateService")
	require.Equal(t, int32(0), out.Service.DesiredCount, "UpdateService: desired count")
	require.Equal(t, "web", aws.ToString(out.Service.ServiceName), "UpdateService: service")
	n, _ := fake.DesiredCount("prod", "web")
	assert.Zero(t, n, "desired count")
	var in struct {
		Cluster      string
		Service      string
		DesiredCount int32
	}
	c := fake.CallsOf("UpdateService")[0]
	if assert.NoError(t, c.Decode(&in), "call %s", c.Body) {
		assert.Equal(t, "web", in.Service, "call: service")
		assert.Zero(t, in.DesiredCount, "call: desired count")
	}
	assert.Equal(t, "AKIDECS", c.AccessKeyID, "call: key")
	for _, tt := range []struct{ cluster, service, code string }{
		{"prod", "api", "ServiceNotFoundException"},
		{"staging", "web", "ClusterNotFoundException"},
	} {
		_, err := client.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String(tt.cluster), Service: aws.String(tt.service), DesiredCount: aws.Int32(1)})
		assert.Equal(t, tt.code, code(err), "%s/%s: %v", tt.cluster, tt.service, err)
	}
}

// The SDK reads the variables Env returns: clients built by
// config.LoadDefaultConfig reach the fakes with no BaseEndpoint.
func TestStartAllEnv(t *testing.T) {
	f, err := awsloop.StartAll()
	require.NoError(t, err)
	defer f.Close()
	for k, v := range f.Env() {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_REGION", "us-west-2")
	cfg, err := config.LoadDefaultConfig(context.Background())
	require.NoError(t, err)
	ctx := context.Background()
	_, err = sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("any")})
	assert.NoError(t, err, "sts")
	_, err = ec2.NewFromConfig(cfg).StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	assert.NoError(t, err, "ec2")
	_, err = rds.NewFromConfig(cfg).StopDBCluster(ctx, &rds.StopDBClusterInput{DBClusterIdentifier: aws.String("c")})
	assert.NoError(t, err, "rds")
	_, err = ecs.NewFromConfig(cfg).UpdateService(ctx, &ecs.UpdateServiceInput{Service: aws.String("svc"), DesiredCount: aws.Int32(0)})
	assert.NoError(t, err, "ecs")
	for i, calls := range [][]awsloop.Call{f.STS.Calls(), f.EC2.Calls(), f.RDS.Calls(), f.ECS.Calls()} {
		service := []string{"sts", "ec2", "rds", "ecs"}[i]
		if assert.Len(t, calls, 1, "%s calls", service) {
			assert.Equal(t, "AKIDENV", calls[0].AccessKeyID, "%s: key", service)
			assert.Equal(t, "us-west-2", calls[0].Region, "%s: region", service)
		}
	}
}

// With VerifySignatures, a call signed with the right key id but another
// secret, or with a session's key but without its token, is refused; the
// SDK's own signature passes.
func TestVerifySignatures(t *testing.T) {
	fake := awsloop.NewSTS()
	fake.Trust(role, "")
	fake.VerifySignatures(fake.Secrets)
	start(t, fake)
	ec2Fake := awsloop.NewEC2()
	ec2Fake.AddInstance("i-0123456789abcdef0", awsloop.InstanceStopped)
	ec2Fake.VerifySignatures(fake.Secrets)
	start(t, ec2Fake)
	ctx := context.Background()
	out, err := stsClient(fake, "AKIDCALLER").AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("s1")})
	require.NoError(t, err)
	cr := out.Credentials
	ec2With := func(id, secret, token string) error {
		cfg := awsloop.Config(id)
		cfg.Credentials = credentials.NewStaticCredentialsProvider(id, secret, token)
		_, err := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = aws.String(ec2Fake.URL()) }).
			StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
		return err
	}
	assert.NoError(t, ec2With(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), aws.ToString(cr.SessionToken)), "session credentials")
	err = ec2With(aws.ToString(cr.AccessKeyId), "not-the-secret", aws.ToString(cr.SessionToken))
	assert.Equal(t, "SignatureDoesNotMatch", code(err), "wrong secret: %v", err)
	err = ec2With(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), "")
	assert.Equal(t, "SignatureDoesNotMatch", code(err), "session key without its token: %v", err)
	_, err = stsClient(fake, "AKIDCALLER").GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	assert.NoError(t, err, "Config credentials")
}
