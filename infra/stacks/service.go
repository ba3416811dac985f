package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
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

// function is one Go Lambda function of a service: its contract (name,
// kind, routes, main package) and what the stack adds to it.
type function struct {
	id     string // construct id
	fn     service.Function
	tables []access
	// env is added to the function's environment (after the tables').
	env map[string]*string
	// timeoutSeconds of one invocation; 0 is gofunction's default.
	timeoutSeconds int
	// reserved concurrency; 0 takes the stage's (config.Stage.Concurrency
	// of the function).
	reserved int
	// grant, when set, adds what the function may do beyond its tables
	// (another AWS service's action), once the function exists.
	grant func(*gofunction.Function)
}

// addFunction builds fn with its environment and grants, published behind
// its live alias (addLiveAlias): invokers target live(f). Only the tables
// listed are granted, each by intent.
func addFunction(stack awscdk.Stack, cfg config.Stage, fn function) (*gofunction.Function, error) {
	lambdas, err := config.LambdasDir()
	if err != nil {
		return nil, err
	}
	env := map[string]*string{
		service.EnvFunction: jsii.String(fn.fn.Name),
		service.EnvStage:    jsii.String(string(cfg.Name)),
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
		reserved = cfg.Concurrency(fn.fn)
	}
	f, err := gofunction.New(stack, fn.id, gofunction.Props{
		ReservedConcurrency: reserved,
		TimeoutSeconds:      fn.timeoutSeconds,
		Stage:               cfg.Name,
		ModuleDir:           lambdas,
		Package:             fn.fn.Package(),
		Environment:         env,
		Description:         fn.fn.Description,
	})
	if err != nil {
		return nil, err
	}
	for _, a := range fn.tables {
		a.grant(a.table, f.Function)
	}
	addLiveAlias(stack, fn.id, f)
	return f, nil
}

// addAPI is addFunction behind an HTTP API serving the function's contract
// routes: IAM-authorized, or JWT-authorized by tokens' issuer. The API
// invokes the function's live alias. more are further functions of the
// same API, each serving its own contract routes (a service whose API is
// split by the AWS services its routes call, so each role and bootstrap
// holds only its own); the first function names the API and owns its
// 5xx alarm. It returns the functions in order.
func addAPI(stack awscdk.Stack, cfg config.Stage, fn function, tokens *tokenIssuer, more ...function) ([]*gofunction.Function, error) {
	if fn.id != apiFunctionID {
		return nil, fmt.Errorf("API function %s: use the construct id %s (its alarms, dashboards and tests name it so)", fn.id, apiFunctionID)
	}
	all := append([]function{fn}, more...)
	fns := make([]*gofunction.Function, len(all))
	contracts := make([]service.Function, len(all))
	targets := make([]awslambda.IFunction, len(all))
	for i, f := range all {
		built, err := addFunction(stack, cfg, f)
		if err != nil {
			return nil, err
		}
		suppressAPIFunction(built)
		alarmErrors(stack, f.id, built.Function)
		if f.grant != nil {
			f.grant(built)
		}
		fns[i], contracts[i], targets[i] = built, f.fn, live(built)
		apiAliases[*targets[i].Node().Path()] = true
	}
	api, err := newHTTPAPI(stack, contracts, cfg, targets, tokens)
	if err != nil {
		return nil, err
	}
	for _, f := range all {
		if err := throttleRoutes(api, f.fn); err != nil {
			return nil, err
		}
	}
	alarmServerErrors(stack, "Api", api, contracts)
	for _, f := range all {
		timeout := f.timeoutSeconds
		if timeout == 0 {
			timeout = gofunction.DefaultTimeout
		}
		alarmRouteLatency(stack, f.fn, timeout)
	}
	return fns, nil
}
