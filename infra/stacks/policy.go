package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/infra/synth"
)

// ApplyPolicy adds cdk-nag's AwsSolutions and Serverless packs to scope as
// aspects (NewStage also runs table.CheckPolicies over the complete stage).
// Findings are error annotations; synth.Failures turns them into a failed
// synth. cdk-nag writes its CSV reports when synth.NagReports says so.
func ApplyPolicy(scope constructs.IConstruct) {
	props := &cdknag.NagPackProps{Verbose: jsii.Bool(true), Reports: jsii.Bool(synth.NagReports(scope))}
	aspects := awscdk.Aspects_Of(scope)
	aspects.Add(cdknag.NewAwsSolutionsChecks(props), nil)
	aspects.Add(cdknag.NewServerlessChecks(props), nil)
}

// suppression is a reviewed exception to a cdk-nag rule. Reason says why the
// rule does not apply here, not that it was noisy.
type suppression struct {
	id, reason string
	appliesTo  []string
}

func suppress(c constructs.IConstruct, list ...suppression) {
	var nag []*cdknag.NagPackSuppression
	for _, s := range list {
		n := &cdknag.NagPackSuppression{Id: jsii.String(s.id), Reason: jsii.String(s.reason)}
		if len(s.appliesTo) > 0 {
			applies := make([]any, len(s.appliesTo))
			for i, a := range s.appliesTo {
				applies[i] = a
				// "/…/" is a pattern: logical ids carry a hash suffix.
				if len(a) > 1 && a[0] == '/' && a[len(a)-1] == '/' {
					applies[i] = &cdknag.RegexAppliesTo{Regex: jsii.String(a)}
				}
			}
			n.AppliesTo = &applies
		}
		nag = append(nag, n)
	}
	cdknag.NagSuppressions_AddResourceSuppressions(c, &nag, jsii.Bool(true))
}

// suppressAPIFunction records the exceptions every API-fronted Go function
// needs.
func suppressAPIFunction(fn *gofunction.Function) {
	suppress(fn.Role, suppression{
		id:        "AwsSolutions-IAM5",
		reason:    "X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so their resource is always *.",
		appliesTo: []string{"Resource::*"},
	})
	suppress(fn.Function, suppression{
		id:     "Serverless-LambdaDLQ",
		reason: "Invoked synchronously by API Gateway: the caller gets the error; a dead-letter queue only receives failed asynchronous invocations.",
	})
}
