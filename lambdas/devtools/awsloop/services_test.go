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
)

func start(t *testing.T, s interface {
	Start() error
	Close() error
}) {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	ch := out.StartingInstances[0]
	if aws.ToString(ch.InstanceId) != "i-0123456789abcdef0" || ch.CurrentState.Name != ec2types.InstanceStateNamePending ||
		aws.ToInt32(ch.CurrentState.Code) != 0 || ch.PreviousState.Name != ec2types.InstanceStateNameStopped || aws.ToInt32(ch.PreviousState.Code) != 80 {
		t.Errorf("StartingInstances %+v %+v", ch.CurrentState, ch.PreviousState)
	}
	c := fake.CallsOf("StartInstances")[0]
	if ids := c.List("InstanceId"); len(ids) != 1 || ids[0] != "i-0123456789abcdef0" || c.Region != "eu-central-1" || c.AccessKeyID != "AKIDEC2" {
		t.Errorf("call %v %s %s", ids, c.Region, c.AccessKeyID)
	}
	if fake.State("i-0123456789abcdef0") != awsloop.InstanceRunning {
		t.Errorf("state %s", fake.State("i-0123456789abcdef0"))
	}
	stop, err := client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	if err != nil || stop.StoppingInstances[0].CurrentState.Name != ec2types.InstanceStateNameStopping {
		t.Fatalf("stop: %v", err)
	}
	for id, want := range map[string]string{
		"i-00000000000000000": "InvalidInstanceID.NotFound",
		"i-0123456789abcdef1": "IncorrectInstanceState",
		"vol-1":               "InvalidInstanceID.Malformed",
	} {
		if _, err := client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{id}}); code(err) != want {
			t.Errorf("stop %s: %v, want %s", id, err, want)
		}
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
	if err != nil || aws.ToString(out.DBInstance.DBInstanceStatus) != awsloop.DBStopping || aws.ToString(out.DBInstance.DBInstanceIdentifier) != "orders" {
		t.Fatalf("StopDBInstance: %v %+v", err, out)
	}
	if c := fake.CallsOf("StopDBInstance")[0]; c.Get("DBInstanceIdentifier") != "orders" || c.AccessKeyID != "AKIDRDS" {
		t.Errorf("call %+v", c)
	}
	_, err = client.StopDBInstance(ctx, &rds.StopDBInstanceInput{DBInstanceIdentifier: aws.String("orders")})
	var invalid *rdstypes.InvalidDBInstanceStateFault
	if !errors.As(err, &invalid) {
		t.Errorf("second stop: %v, want InvalidDBInstanceStateFault", err)
	}
	_, err = client.StartDBInstance(ctx, &rds.StartDBInstanceInput{DBInstanceIdentifier: aws.String("nope")})
	var notFound *rdstypes.DBInstanceNotFoundFault
	if !errors.As(err, &notFound) {
		t.Errorf("unknown instance: %v", err)
	}
	cl, err := client.StartDBCluster(ctx, &rds.StartDBClusterInput{DBClusterIdentifier: aws.String("reports")})
	if err != nil || aws.ToString(cl.DBCluster.Status) != awsloop.DBStarting || fake.ClusterStatus("reports") != awsloop.DBAvailable {
		t.Fatalf("StartDBCluster: %v", err)
	}
	_, err = client.StartDBCluster(ctx, &rds.StartDBClusterInput{DBClusterIdentifier: aws.String("reports")})
	var invalidCluster *rdstypes.InvalidDBClusterStateFault
	if !errors.As(err, &invalidCluster) {
		t.Errorf("second start: %v", err)
	}
	_, err = client.StopDBCluster(ctx, &rds.StopDBClusterInput{DBClusterIdentifier: aws.String("nope")})
	var clusterNotFound *rdstypes.DBClusterNotFoundFault
	if !errors.As(err, &clusterNotFound) {
		t.Errorf("unknown cluster: %v", err)
	}
}

func TestECS(t *testing.T) {
	fake := awsloop.NewECS()
	start(t, fake)
	fake.AddService("prod", "web", 3)
	client := ecs.NewFromConfig(awsloop.Config("AKIDECS"), func(o *ecs.Options) { o.BaseEndpoint = aws.String(fake.URL()) })
	ctx := context.Background()

	d, err := client.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("prod"), Services: []string{"web", "gone"}})
	if err != nil || len(d.Services) != 1 || d.Services[0].DesiredCount != 3 || len(d.Failures) != 1 || aws.ToString(d.Failures[0].Reason) != "MISSING" {
		t.Fatalf("DescribeServices: %v %+v", err, d)
	}
	out, err := client.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("arn:aws:ecs:us-east-1:111122223333:cluster/prod"),
		Service: aws.String("web"), DesiredCount: aws.Int32(0)})
	if err != nil || out.Service.DesiredCount != 0 || aws.ToString(out.Service.ServiceName) != "web" {
		t.Fatalf("UpdateService: %v", err)
	}
	if n, _ := fake.DesiredCount("prod", "web"); n != 0 {
		t.Errorf("desired count %d", n)
	}
	var in struct {
		Cluster      string
		Service      string
		DesiredCount int32
	}
	c := fake.CallsOf("UpdateService")[0]
	if err := c.Decode(&in); err != nil || in.Service != "web" || in.DesiredCount != 0 || c.AccessKeyID != "AKIDECS" {
		t.Errorf("call %s %v", c.Body, err)
	}
	for _, tt := range []struct{ cluster, service, code string }{
		{"prod", "api", "ServiceNotFoundException"},
		{"staging", "web", "ClusterNotFoundException"},
	} {
		_, err := client.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String(tt.cluster), Service: aws.String(tt.service), DesiredCount: aws.Int32(1)})
		if code(err) != tt.code {
			t.Errorf("%s/%s: %v, want %s", tt.cluster, tt.service, err, tt.code)
		}
	}
}

// The SDK reads the variables Env returns: clients built by
// config.LoadDefaultConfig reach the fakes with no BaseEndpoint.
func TestStartAllEnv(t *testing.T) {
	f, err := awsloop.StartAll()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for k, v := range f.Env() {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_REGION", "us-west-2")
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("any")}); err != nil {
		t.Errorf("sts: %v", err)
	}
	if _, err := ec2.NewFromConfig(cfg).StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}}); err != nil {
		t.Errorf("ec2: %v", err)
	}
	if _, err := rds.NewFromConfig(cfg).StopDBCluster(ctx, &rds.StopDBClusterInput{DBClusterIdentifier: aws.String("c")}); err != nil {
		t.Errorf("rds: %v", err)
	}
	if _, err := ecs.NewFromConfig(cfg).UpdateService(ctx, &ecs.UpdateServiceInput{Service: aws.String("svc"), DesiredCount: aws.Int32(0)}); err != nil {
		t.Errorf("ecs: %v", err)
	}
	for _, calls := range [][]awsloop.Call{f.STS.Calls(), f.EC2.Calls(), f.RDS.Calls(), f.ECS.Calls()} {
		if len(calls) != 1 || calls[0].AccessKeyID != "AKIDENV" || calls[0].Region != "us-west-2" {
			t.Errorf("calls %+v", calls)
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
	if err != nil {
		t.Fatal(err)
	}
	cr := out.Credentials
	ec2With := func(id, secret, token string) error {
		cfg := awsloop.Config(id)
		cfg.Credentials = credentials.NewStaticCredentialsProvider(id, secret, token)
		_, err := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = aws.String(ec2Fake.URL()) }).
			StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
		return err
	}
	if err := ec2With(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), aws.ToString(cr.SessionToken)); err != nil {
		t.Errorf("session credentials: %v", err)
	}
	if err := ec2With(aws.ToString(cr.AccessKeyId), "not-the-secret", aws.ToString(cr.SessionToken)); code(err) != "SignatureDoesNotMatch" {
		t.Errorf("wrong secret: %v", err)
	}
	if err := ec2With(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), ""); code(err) != "SignatureDoesNotMatch" {
		t.Errorf("session key without its token: %v", err)
	}
	if _, err := stsClient(fake, "AKIDCALLER").GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); err != nil {
		t.Errorf("Config credentials: %v", err)
	}
}
