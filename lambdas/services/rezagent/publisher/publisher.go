// Package publisher is rez_agent's two functions that publish to SNS, the
// API and the scheduler: package rezagent's handler and job with the
// SDK's SNS client. Their bindings live here, not in package rezagent, so
// that the processor's bootstrap, which links package rezagent and
// publishes nothing, does not link SNS's client: an SDK service package's
// initialiser runs at every cold start of a binary that imports it
// (docs/functions.md, "Cold start").
package publisher

import (
	"context"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
)

// APIFunction is the API's binding: cmd/rezagent runs it in Lambda.
func APIFunction() fn.Binding { return fn.HTTP(contract.API, NewAPI) }

// SchedulerFunction is the scheduler's binding: cmd/rezagent-scheduler
// runs it in Lambda.
func SchedulerFunction() fn.Binding { return fn.Schedule(contract.Scheduler, NewScheduler) }

// Functions lists the functions bound in this package, in the contract's order:
// services.Functions gathers every package's list, so a new function of
// this package is listed here, once.
func Functions() []fn.Binding { return []fn.Binding{APIFunction(), SchedulerFunction()} }

// NewAPI builds the API from its function's environment.
func NewAPI(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (http.Handler, error) {
	return rezagent.New(ctx, getenv, NewSNS, opts...)
}

// NewScheduler builds the scheduler from its function's environment.
func NewScheduler(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (fn.Job, error) {
	return rezagent.NewScheduler(ctx, getenv, NewSNS, opts...)
}

// NewSNS returns the SNS client of a function, configured from getenv
// (AWS_ENDPOINT_URL_SNS points it at a loopback endpoint).
func NewSNS(ctx context.Context, getenv func(string) string) (rezagent.SNSAPI, error) {
	cfg, err := awsconf.For(ctx, getenv, sns.ServiceID)
	if err != nil {
		return nil, err
	}
	return SNS{sns.NewFromConfig(cfg)}, nil
}

// SNS is rezagent.SNSAPI over the SDK's SNS client.
type SNS struct{ Client *sns.Client }

// Publish calls SNS Publish, each attribute a String (SNS refuses an
// empty value: the caller leaves such an attribute out).
func (s SNS) Publish(ctx context.Context, topic, message string, attrs map[string]string) error {
	in := &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(message)}
	if len(attrs) > 0 {
		in.MessageAttributes = make(map[string]types.MessageAttributeValue, len(attrs))
		for name, v := range attrs {
			in.MessageAttributes[name] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	_, err := s.Client.Publish(ctx, in)
	return err
}
