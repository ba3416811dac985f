package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/agenticpm"
	agenticpmcontract "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/gofunction"
	"github.com/dynastack/dynastack/infra/config"
)

func buildAgenticPM(stack awscdk.Stack, cfg config.Stage) error {
	hold := cfg.AgenticPM.WithDefaults(string(cfg.Name))
	tbl, err := agenticpm.NewTable(stack, "Table", props(cfg, agenticpmcontract.Name, "Table"))
	if err != nil {
		return err
	}
	// Released actions go to integrations through this bus; the name is
	// fixed per stage so the functions get it as a literal (the local
	// runner resolves no Ref but a table's).
	bus := awsevents.NewEventBus(stack, jsii.String("ActionBus"), &awsevents.EventBusProps{
		EventBusName: jsii.String(hold.EventBusName),
		Description:  jsii.String("AgenticPM: held agent actions released for integrations (AgentActionReleased)"),
	})
	busEnv := map[string]*string{agenticpmcontract.EnvEventBus: jsii.String(hold.EventBusName)}
	// Integration credentials are encrypted by the credentials API with
	// the stage's own key (decision 10); it may only encrypt, and only
	// under the encryption context it uses. The alias is a literal per
	// stage, so the function gets it as one (and the local runner can
	// create it).
	key, err := agenticpm.NewCredentialsKey(stack, "CredentialsKey", cfg.Name)
	if err != nil {
		return err
	}
	// The API is three functions (decision 22): each role holds only what
	// its routes call, the bus only for the actions API, the key only for
	// the credentials API.
	items := []string{ddbCheck, ddbGet, ddbPut, ddbQuery, ddbUpdate}
	if _, err := addAPI(stack, cfg, function{
		id: "Handler", fn: agenticpmcontract.API,
		tables: []access{{tbl, agenticpmcontract.EnvTable, exactly(items, agenticpmcontract.IndexGSI1)}},
	}, nil, function{
		id: "Actions", fn: agenticpmcontract.Actions,
		tables: []access{{tbl, agenticpmcontract.EnvTable, exactly(items, agenticpmcontract.IndexGSI1)}},
		env:    busEnv,
		grant:  func(f *gofunction.Function) { bus.GrantPutEventsTo(f.Function, nil) },
	}, function{
		id: "Credentials", fn: agenticpmcontract.Credentials,
		tables: []access{{tbl, agenticpmcontract.EnvTable, exactly([]string{ddbGet, ddbUpdate})}},
		env: map[string]*string{
			agenticpmcontract.EnvCredentialsKey: jsii.String(agenticpmcontract.CredentialsKeyAlias(string(cfg.Name))),
		},
		grant: func(f *gofunction.Function) { agenticpm.GrantCredentialsEncrypt(key, f.Function, cfg.Name) },
	}); err != nil {
		return err
	}
	// Agent stacks import the key by this ARN and grant their role
	// agenticpm.GrantCredentialsDecrypt for the integrations it reads.
	awscdk.NewCfnOutput(stack, jsii.String("CredentialsKeyArn"), &awscdk.CfnOutputProps{
		Value:       key.KeyArn(),
		Description: jsii.String("AgenticPM credentials key: grant agent roles agenticpm.GrantCredentialsDecrypt on it"),
	})
	// The release job queries the hold queue and outbox on GSI1, releases
	// in a transaction (an Update and two event Puts) and moves outbox
	// leases with UpdateItem: nothing else.
	release, err := addScheduled(stack, cfg, function{
		id: "Release", fn: agenticpmcontract.Release,
		tables: []access{{tbl, agenticpmcontract.EnvTable, exactly(
			[]string{"dynamodb:PutItem", "dynamodb:UpdateItem"}, agenticpmcontract.IndexGSI1)}},
		env: busEnv,
	}, hold.Release)
	if err != nil {
		return err
	}
	bus.GrantPutEventsTo(release.Function, nil)
	alarmOverdueHeldActions(stack, "Release")
	return nil
}
