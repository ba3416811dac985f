// Package stacks builds one stack per service per stage: resources only.
// The checks every synth runs over them, and the verdict the app exits
// with, are infra/synth's.
package stacks

import (
	"errors"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	agenticpmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/catalog"
	itsmcontract "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleuscontract "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezagentcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
)

// Service is one deployable service: its contract (the stack id is its
// name) and how its stack is filled.
type Service struct {
	service.Contract
	Build func(stack awscdk.Stack, cfg config.Stage) error
}

// builders fill each service's stack, by contract name.
var builders = map[string]func(awscdk.Stack, config.Stage) error{
	agenticpmcontract.Name: buildAgenticPM,
	itsmcontract.Name:      buildITSM,
	nucleuscontract.Name:   buildNucleus,
	rezagentcontract.Name:  buildRezAgent,
	stakcontract.Name:      buildStak,
}

// Services lists every service of the catalog, in design-document order.
// A contract without a builder panics: every synth and test finds it.
func Services() []Service {
	var svcs []Service
	for _, c := range catalog.Services() {
		build, ok := builders[c.Name]
		if !ok {
			panic("stacks: service " + c.Name + " has a contract and no builder")
		}
		svcs = append(svcs, Service{Contract: c, Build: build})
	}
	return svcs
}

// NewStage adds the stage cfg.Name to app with one stack per service. All
// errors of all stacks are returned together.
func NewStage(app constructs.Construct, cfg config.Stage) (awscdk.Stage, error) {
	var env *awscdk.Environment
	if cfg.Account != "" || cfg.Region != "" {
		env = &awscdk.Environment{}
		if cfg.Account != "" {
			env.Account = jsii.String(cfg.Account)
		}
		if cfg.Region != "" {
			env.Region = jsii.String(cfg.Region)
		}
	}
	if err := cfg.ValidateGuardrails(); err != nil {
		return nil, err
	}
	stage := awscdk.NewStage(app, jsii.String(string(cfg.Name)), &awscdk.StageProps{Env: env})
	// Aspects do not cross stage boundaries, so each stage gets the checks.
	ApplyPolicy(stage)
	var errs []error
	for _, svc := range Services() {
		stack := awscdk.NewStack(stage, jsii.String(svc.Name), &awscdk.StackProps{
			StackName:             jsii.String(fmt.Sprintf("%s-%s", svc.Name, cfg.Name)),
			Description:           jsii.String(fmt.Sprintf("dynastack %s, stage %s", svc.Description, cfg.Name)),
			TerminationProtection: jsii.Bool(cfg.TerminationProtection),
			Env:                   placement(cfg, svc.Name),
		})
		if err := svc.Build(stack, cfg); err != nil {
			errs = append(errs, fmt.Errorf("%s/%s: %w", cfg.Name, svc.Name, err))
			continue
		}
		wireAlarms(stack, cfg, svc.Contract)
		if svc.Name == overviewHost() {
			addOverview(stack, cfg)
		}
		if err := wireRollouts(stack, cfg); err != nil {
			errs = append(errs, fmt.Errorf("%s/%s: %w", cfg.Name, svc.Name, err))
		}
		addBackup(stack, cfg)
	}
	if err := checkTableKeys(stage, cfg); err != nil {
		errs = append(errs, err)
	}
	// dynastack's own table and IAM checks, for what cdk-nag does not
	// inspect (it knows AWS::DynamoDB::Table, not TableV2's GlobalTable), in
	// one pass: the stage is complete, nothing after this adds or overrides.
	table.CheckPolicies(stage)
	return stage, errors.Join(errs...)
}

// placement is the environment of the service's stack when the stage
// places it (config.Stage.Services), else nil: the stack takes the
// stage's, and its template stays as it was. Each stack holds everything
// it uses (its alarm topic and key included) and nothing refers to another
// stack, so stacks of one stage may live in different accounts and Regions.
func placement(cfg config.Stage, service string) *awscdk.Environment {
	if !cfg.Placed(service) {
		return nil
	}
	p := cfg.PlacementOf(service)
	env := &awscdk.Environment{}
	if p.Account != "" {
		env.Account = jsii.String(p.Account)
	}
	if p.Region != "" {
		env.Region = jsii.String(p.Region)
	}
	return env
}

// Build adds every stage to app, then the bootstrap stacks of their
// accounts (NewBootstrap).
func Build(app constructs.Construct, stages []config.Stage) error {
	var errs []error
	for _, cfg := range stages {
		if _, err := NewStage(app, cfg); err != nil {
			errs = append(errs, err)
		}
	}
	NewBootstrap(app, stages)
	return errors.Join(errs...)
}
