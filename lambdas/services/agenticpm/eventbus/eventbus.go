// Package eventbus binds AgenticPM's functions that put released actions
// on the stage's bus, the actions API (agenticpm-actions: a person's
// release) and the release job (agenticpm-release: releases that fell
// due), with the SDK's EventBridge client, which only they link
// (docs/schemas/agenticpm.md, decision 22; docs/functions.md, "Cold
// start").
package eventbus

import (
	"context"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/awsconf"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// ActionsFunction is the actions API's binding (cmd/agenticpm-actions).
func ActionsFunction() fn.Binding { return fn.HTTP(contract.Actions, NewActionsAPI) }

// ReleaseFunction is the release job's binding (cmd/agenticpm-release).
func ReleaseFunction() fn.Binding { return fn.Schedule(contract.Release, NewReleaseJob) }

// Functions lists the functions bound in this package: services.Functions
// gathers every package's list, so a new function of this package is
// listed here, once.
func Functions() []fn.Binding { return []fn.Binding{ActionsFunction(), ReleaseFunction()} }

// NewConfig is agenticpm.NewConfig plus, with a bus, the EventBridge
// client (its endpoint overridable by AWS_ENDPOINT_URL_EVENTBRIDGE, as the
// local runner does). Without a bus, releases still happen and wait in the
// outbox.
func NewConfig(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (agenticpm.Config, error) {
	cfg, err := agenticpm.NewConfig(ctx, getenv, opts...)
	if err != nil || cfg.EventBus == "" {
		return cfg, err
	}
	awsCfg, err := awsconf.For(ctx, getenv, eventbridge.ServiceID)
	if err != nil {
		return cfg, err
	}
	cfg.Events = NewEvents(awsCfg)
	return cfg, nil
}

// NewActionsAPI builds the actions API from its function's environment.
func NewActionsAPI(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (http.Handler, error) {
	cfg, err := NewConfig(ctx, getenv, opts...)
	if err != nil {
		return nil, err
	}
	return agenticpm.NewActionsHandler(cfg), nil
}

// NewReleaseJob builds the release job from its function's environment
// (its table and bus variables).
func NewReleaseJob(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (fn.Job, error) {
	cfg, err := NewConfig(ctx, getenv, opts...)
	if err != nil {
		return nil, err
	}
	return agenticpm.NewReleaseJobFromConfig(cfg), nil
}

// Events is agenticpm.EventsAPI over the SDK's EventBridge client.
type Events struct{ client *eventbridge.Client }

var _ agenticpm.EventsAPI = (*Events)(nil)

// NewEvents returns EventBridge's PutEvents with cfg (awsconf.For(…,
// eventbridge.ServiceID) in a function).
func NewEvents(cfg aws.Config) *Events { return &Events{client: eventbridge.NewFromConfig(cfg)} }

// PutEvents sends entries (at most 10, 256 KB in all) in one call.
func (e *Events) PutEvents(ctx context.Context, entries []agenticpm.EventEntry) ([]agenticpm.EventResult, error) {
	in := &eventbridge.PutEventsInput{Entries: make([]types.PutEventsRequestEntry, len(entries))}
	for i, en := range entries {
		in.Entries[i] = types.PutEventsRequestEntry{EventBusName: optional(en.EventBusName), Source: optional(en.Source),
			DetailType: optional(en.DetailType), Detail: optional(en.Detail)}
	}
	out, err := e.client.PutEvents(ctx, in)
	if err != nil {
		return nil, err
	}
	results := make([]agenticpm.EventResult, len(out.Entries))
	for i, r := range out.Entries {
		results[i] = agenticpm.EventResult{EventID: aws.ToString(r.EventId), ErrorCode: aws.ToString(r.ErrorCode), ErrorMessage: aws.ToString(r.ErrorMessage)}
	}
	return results, nil
}

// optional is s as an optional member of the SDK's input: nil when
// empty, so that an unset field is left out of the request rather than
// sent as "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}
