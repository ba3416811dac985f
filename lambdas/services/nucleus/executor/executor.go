// Package executor is Nucleus's executor function: the schedule logic,
// claims and audit of nucleus.Executor, with the EC2, RDS and ECS calls
// that start and stop resources. Their SDK clients are imported here, not
// in package nucleus, so that the API's bootstrap does not link them: an
// SDK service package's initialiser runs at every cold start of a binary
// that imports it (RDS's and ECS's schemas about 1.5 and 1.2 ms;
// docs/functions.md, "Cold start"), whether or not a request calls it.
package executor

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/rds"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
)

// Function is the executor's binding: cmd/nucleus-executor runs it in
// Lambda.
func Function() fn.Binding { return fn.Schedule(contract.Executor, New) }

// Functions lists the functions bound in this package:
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{Function()} }

// New builds the executor from its function's environment.
func New(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (fn.Job, error) {
	return nucleus.NewExecutor(ctx, getenv, Act, opts...)
}

// Act performs one start or stop with a client of the resource's
// service, in its region, signed by the account's role.
func Act(ctx context.Context, a nucleus.ResourceAction) nucleus.Outcome {
	cfg := func(serviceID string) aws.Config { return a.Cloud.Config(a.Role, a.Region, serviceID) }
	switch a.Type {
	case nucleus.ResourceEC2:
		return ec2Action(ctx, ec2.NewFromConfig(cfg(ec2.ServiceID)), strings.TrimPrefix(a.Resource, "instance/"), a.Start)
	case nucleus.ResourceRDS:
		return rdsAction(ctx, rds.NewFromConfig(cfg(rds.ServiceID)), a.Resource, a.Start)
	case nucleus.ResourceECS:
		return ecsAction(ctx, ecs.NewFromConfig(cfg(ecs.ServiceID)), strings.TrimPrefix(a.Resource, "service/"), a.PreviousDesiredCount, a.Start)
	}
	return nucleus.Failed(map[string]any{"error": nucleus.AWSError{Code: "UnknownResourceType", Message: string(a.Type)}})
}

func ec2Action(ctx context.Context, client *ec2.Client, id string, start bool) nucleus.Outcome {
	var (
		call    = "ec2:StopInstances"
		changes []ec2types.InstanceStateChange
		err     error
	)
	if start {
		call = "ec2:StartInstances"
		var out *ec2.StartInstancesOutput
		if out, err = client.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{id}}); err == nil {
			changes = out.StartingInstances
		}
	} else {
		var out *ec2.StopInstancesOutput
		if out, err = client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{id}}); err == nil {
			changes = out.StoppingInstances
		}
	}
	d := map[string]any{}
	if err == nil && len(changes) == 1 {
		d["previous_state"], d["current_state"] = stateName(changes[0].PreviousState), stateName(changes[0].CurrentState)
	}
	return nucleus.CallOutcome(call, err, d)
}

// stateName is an instance state's name, "" when EC2 gave none.
func stateName(s *ec2types.InstanceState) string {
	if s == nil {
		return ""
	}
	return string(s.Name)
}

// rdsAction starts or stops a DB instance (db:<id>) or cluster
// (cluster:<id>), and records the status RDS answers with.
func rdsAction(ctx context.Context, client *rds.Client, resource string, start bool) nucleus.Outcome {
	kind, id, _ := strings.Cut(resource, ":")
	var (
		action string
		status *string
		err    error
	)
	switch {
	case kind == "cluster" && start:
		action = "StartDBCluster"
		var out *rds.StartDBClusterOutput
		if out, err = client.StartDBCluster(ctx, &rds.StartDBClusterInput{DBClusterIdentifier: aws.String(id)}); err == nil && out.DBCluster != nil {
			status = out.DBCluster.Status
		}
	case kind == "cluster":
		action = "StopDBCluster"
		var out *rds.StopDBClusterOutput
		if out, err = client.StopDBCluster(ctx, &rds.StopDBClusterInput{DBClusterIdentifier: aws.String(id)}); err == nil && out.DBCluster != nil {
			status = out.DBCluster.Status
		}
	case start:
		action = "StartDBInstance"
		var out *rds.StartDBInstanceOutput
		if out, err = client.StartDBInstance(ctx, &rds.StartDBInstanceInput{DBInstanceIdentifier: aws.String(id)}); err == nil && out.DBInstance != nil {
			status = out.DBInstance.DBInstanceStatus
		}
	default:
		action = "StopDBInstance"
		var out *rds.StopDBInstanceOutput
		if out, err = client.StopDBInstance(ctx, &rds.StopDBInstanceInput{DBInstanceIdentifier: aws.String(id)}); err == nil && out.DBInstance != nil {
			status = out.DBInstance.DBInstanceStatus
		}
	}
	d := map[string]any{}
	if err == nil {
		d["current_status"] = aws.ToString(status)
	}
	return nucleus.CallOutcome("rds:"+action, err, d)
}

// ecsAction scales a service to 0 and back. Stopping reads the desired
// count first and keeps it on the resource item; a count of 0 (already
// stopped, or a retry after a crash between the scale-down and its
// record) keeps the stored value. Starting restores the stored count
// (previous); without one, a service already running is left alone and
// one at 0 fails.
func ecsAction(ctx context.Context, client *ecs.Client, path string, previous *int32, start bool) nucleus.Outcome {
	cluster, service, ok := strings.Cut(path, "/")
	if !ok {
		// service/<name>: the old ARN format, in the default cluster.
		cluster, service = "default", path
	}
	describe := func() (int32, nucleus.Outcome, bool) {
		out, err := client.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String(cluster), Services: []string{service}})
		switch {
		case err != nil:
			return 0, nucleus.CallOutcome("ecs:DescribeServices", err, nil), false
		case len(out.Services) != 1:
			reason := "MISSING"
			if len(out.Failures) > 0 {
				reason = aws.ToString(out.Failures[0].Reason)
			}
			return 0, nucleus.Failed(map[string]any{"call": "ecs:DescribeServices", "error": nucleus.AWSError{Code: reason, Message: "service " + service + " not found in cluster " + cluster}}), false
		}
		return out.Services[0].DesiredCount, nucleus.Outcome{}, true
	}
	update := func(n int32, d map[string]any) nucleus.Outcome {
		_, err := client.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String(cluster), Service: aws.String(service), DesiredCount: aws.Int32(n)})
		d["desired_count"] = n
		return nucleus.CallOutcome("ecs:UpdateService", err, d)
	}
	if start {
		if previous != nil {
			return update(*previous, map[string]any{})
		}
		n, fail, ok := describe()
		switch {
		case !ok:
			return fail
		case n > 0:
			return nucleus.CallOutcome("ecs:DescribeServices", nil, map[string]any{"desired_count": n, "unchanged": true})
		}
		return nucleus.Failed(map[string]any{"call": "ecs:DescribeServices", "error": nucleus.AWSError{Code: "NoDesiredCount",
			Message: "the service is at desired count 0 and no earlier stop recorded the count to restore; set it once by hand"}})
	}
	n, fail, ok := describe()
	if !ok {
		return fail
	}
	out := update(0, map[string]any{"previous_desired_count": n})
	if out.Status == nucleus.StatusSuccess && n > 0 {
		out.KeepCount = &n
	}
	return out
}
