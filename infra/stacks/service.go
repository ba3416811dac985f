package stacks

import (
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
)

// Environment variables every service function gets; the local runner reads
// them from the synthesized template to wire the same code to the same
// tables.
const (
	ServiceEnv = "DYNASTACK_SERVICE"
	StageEnv   = "DYNASTACK_STAGE"
)

// access is what a function may do with one table, and under which
// environment variable it finds the table's name.
type access struct {
	table  *table.Table
	envVar string
	grant  func(*table.Table, awsiam.IGrantable)
}

// The DynamoDB actions functions are granted, each exactly where its code
// calls it (exactly). test/iamcalls proves the grants against the calls
// the tests record, both ways.
const (
	ddbCheck  = "dynamodb:ConditionCheckItem"
	ddbDelete = "dynamodb:DeleteItem"
	ddbGet    = "dynamodb:GetItem"
	ddbPut    = "dynamodb:PutItem"
	ddbQuery  = "dynamodb:Query" // on the table; indexes are named apart
	ddbUpdate = "dynamodb:UpdateItem"
)

// exactly grants the listed item actions on the table and Query on the
// listed indexes, nothing else.
func exactly(actions []string, indexes ...string) func(*table.Table, awsiam.IGrantable) {
	return func(t *table.Table, g awsiam.IGrantable) {
		if _, err := t.GrantExactly(g, actions, indexes...); err != nil {
			panic(err) // a programming error in this package, caught by every synth
		}
	}
}

// function describes one Go Lambda function of a service.
type function struct {
	id          string // construct id
	service     string // DYNASTACK_SERVICE
	pkg         string // main package in the lambdas module
	description string
	tables      []access
	// env is added to the function's environment (after the tables').
	env map[string]*string
	// timeoutSeconds of one invocation; 0 is gofunction's default.
	timeoutSeconds int
	// reserved concurrency; 0 takes the stage's (config.Stage.Concurrency
	// of the service name).
	reserved int
}

// addFunction builds fn with its environment and grants. Only the tables
// listed are granted, each by intent.
func addFunction(stack awscdk.Stack, cfg config.Stage, fn function) (*gofunction.Function, error) {
	lambdas, err := config.LambdasDir()
	if err != nil {
		return nil, err
	}
	env := map[string]*string{
		ServiceEnv: jsii.String(fn.service),
		StageEnv:   jsii.String(string(cfg.Name)),
	}
	for _, a := range fn.tables {
		for k, v := range a.table.Environment(a.envVar) {
			if _, dup := env[k]; dup {
				return nil, fmt.Errorf("function %s: environment variable %s set twice", fn.id, k)
			}
			env[k] = v
		}
	}
	for k, v := range fn.env {
		if _, dup := env[k]; dup {
			return nil, fmt.Errorf("function %s: environment variable %s set twice", fn.id, k)
		}
		env[k] = v
	}
	reserved := fn.reserved
	if reserved == 0 {
		reserved = cfg.Concurrency(fn.service)
	}
	f, err := gofunction.New(stack, fn.id, gofunction.Props{
		ReservedConcurrency: reserved,
		TimeoutSeconds:      fn.timeoutSeconds,
		Stage:               cfg.Name,
		ModuleDir:           lambdas,
		Package:             fn.pkg,
		Environment:         env,
		Description:         fn.description,
	})
	if err != nil {
		return nil, err
	}
	for _, a := range fn.tables {
		a.grant(a.table, f.Function)
	}
	return f, nil
}

// addAPI is addFunction behind an HTTP API: routes IAM-authorized, tokens'
// routes JWT-authorized.
func addAPI(stack awscdk.Stack, cfg config.Stage, fn function, routes []Route, tokens ...tokenRoutes) (*gofunction.Function, error) {
	f, err := addFunction(stack, cfg, fn)
	if err != nil {
		return nil, err
	}
	suppressAPIFunction(f)
	alarmErrors(stack, fn.id, f.Function)
	api, err := newHTTPAPI(stack, fn.service, cfg, f.Function, routes, tokens...)
	if err != nil {
		return nil, err
	}
	served := slices.Clone(routes)
	for _, tr := range tokens {
		served = append(served, tr.routes...)
	}
	if err := throttleRoutes(api, fn.service, served); err != nil {
		return nil, err
	}
	alarmServerErrors(stack, "Api", api)
	return f, nil
}
