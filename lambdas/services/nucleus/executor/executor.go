// Package executor is Nucleus's executor function: the schedule logic,
// claims and audit of nucleus.Executor, with the EC2, RDS and ECS calls
// that start and stop resources. They go through platform/awsrpc, not the
// SDK's clients: those clients' package initialisers (RDS's and ECS's
// schemas above all) took about 3 ms of every executor cold start, and
// EC2's client alone took two minutes of every fresh build, for the eight
// operations here (docs/functions.md, "Cold start").
package executor

import (
	"context"
	"net/url"
	"strings"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/awsrpc"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/platform/schedule"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
)

// Function is the executor's binding: cmd/nucleus-executor runs it in
// Lambda.
func Function() fn.Binding { return fn.Schedule(contract.Executor, New) }

// New builds the executor from its function's environment.
func New(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (schedule.Job, error) {
	return nucleus.NewExecutor(ctx, getenv, Act, opts...)
}

// Act performs one start or stop with the client of the resource's type.
func Act(ctx context.Context, a nucleus.ResourceAction) nucleus.Outcome {
	client := func(svc awsrpc.Service) *awsrpc.Client {
		return a.Cloud.Client(svc, a.Cloud.Regional(a.Role, a.Region))
	}
	switch a.Type {
	case nucleus.ResourceEC2:
		return ec2Action(ctx, client(awsrpc.EC2), strings.TrimPrefix(a.Resource, "instance/"), a.Start)
	case nucleus.ResourceRDS:
		return rdsAction(ctx, client(awsrpc.RDS), a.Resource, a.Start)
	case nucleus.ResourceECS:
		return ecsAction(ctx, client(awsrpc.ECS), strings.TrimPrefix(a.Resource, "service/"), a.PreviousDesiredCount, a.Start)
	}
	return nucleus.Failed(map[string]any{"error": nucleus.AWSError{Code: "UnknownResourceType", Message: string(a.Type)}})
}

// instanceChanges is StartInstances' and StopInstances' answer: EC2 names
// the list instancesSet in both.
type instanceChanges struct {
	Items []struct {
		Current  string `xml:"currentState>name"`
		Previous string `xml:"previousState>name"`
	} `xml:"instancesSet>item"`
}

func ec2Action(ctx context.Context, client *awsrpc.Client, id string, start bool) nucleus.Outcome {
	action := "StopInstances"
	if start {
		action = "StartInstances"
	}
	var out instanceChanges
	err := client.Query(ctx, action, url.Values{"InstanceId.1": {id}}, &out)
	d := map[string]any{}
	if err == nil && len(out.Items) == 1 {
		d["previous_state"], d["current_state"] = out.Items[0].Previous, out.Items[0].Current
	}
	return nucleus.CallOutcome("ec2:"+action, err, d)
}

// rdsAction starts or stops a DB instance (db:<id>) or cluster
// (cluster:<id>).
func rdsAction(ctx context.Context, client *awsrpc.Client, resource string, start bool) nucleus.Outcome {
	kind, id, _ := strings.Cut(resource, ":")
	verb := "Stop"
	if start {
		verb = "Start"
	}
	// The status is in <Action>Result: DBCluster>Status for a cluster,
	// DBInstance>DBInstanceStatus for an instance.
	var out struct {
		Children []struct {
			Cluster  string `xml:"DBCluster>Status"`
			Instance string `xml:"DBInstance>DBInstanceStatus"`
		} `xml:",any"`
	}
	action, params := verb+"DBInstance", url.Values{"DBInstanceIdentifier": {id}}
	if kind == "cluster" {
		action, params = verb+"DBCluster", url.Values{"DBClusterIdentifier": {id}}
	}
	err := client.Query(ctx, action, params, &out)
	d := map[string]any{}
	if err == nil {
		status := ""
		for _, c := range out.Children {
			status += c.Cluster + c.Instance
		}
		d["current_status"] = status
	}
	return nucleus.CallOutcome("rds:"+action, err, d)
}

// ecsServices is the part of DescribeServices' answer read here.
type ecsServices struct {
	Services []struct {
		DesiredCount int32 `json:"desiredCount"`
	} `json:"services"`
	Failures []struct {
		Reason string `json:"reason"`
	} `json:"failures"`
}

// ecsAction scales a service to 0 and back. Stopping reads the desired
// count first and keeps it on the resource item; a count of 0 (already
// stopped, or a retry after a crash between the scale-down and its
// record) keeps the stored value. Starting restores the stored count
// (previous); without one, a service already running is left alone and
// one at 0 fails.
func ecsAction(ctx context.Context, client *awsrpc.Client, path string, previous *int32, start bool) nucleus.Outcome {
	cluster, service, ok := strings.Cut(path, "/")
	if !ok {
		// service/<name>: the old ARN format, in the default cluster.
		cluster, service = "default", path
	}
	describe := func() (int32, nucleus.Outcome, bool) {
		var out ecsServices
		err := client.JSON(ctx, "DescribeServices", map[string]any{"cluster": cluster, "services": []string{service}}, &out)
		switch {
		case err != nil:
			return 0, nucleus.CallOutcome("ecs:DescribeServices", err, nil), false
		case len(out.Services) != 1:
			reason := "MISSING"
			if len(out.Failures) > 0 {
				reason = out.Failures[0].Reason
			}
			return 0, nucleus.Failed(map[string]any{"call": "ecs:DescribeServices", "error": nucleus.AWSError{Code: reason, Message: "service " + service + " not found in cluster " + cluster}}), false
		}
		return out.Services[0].DesiredCount, nucleus.Outcome{}, true
	}
	update := func(n int32, d map[string]any) nucleus.Outcome {
		err := client.JSON(ctx, "UpdateService", map[string]any{"cluster": cluster, "service": service, "desiredCount": n}, nil)
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
