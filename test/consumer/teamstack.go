// Package teamstack is how another team uses dynastack: it references the
// deployed ITSM tickets table of a stage and grants its own reporting
// function read access by intent, and it creates a private copy of the
// AgenticPM schema for its own experiments.
package teamstack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/agenticpm"
	"github.com/dynastack/dynastack/constructs/itsm"
	"github.com/dynastack/dynastack/constructs/table"
)

// NewReportingStack builds the team's stack for one dynastack stage.
func NewReportingStack(scope constructs.Construct, id string, stage table.Stage) (awscdk.Stack, error) {
	stack := awscdk.NewStack(scope, jsii.String(id), nil)

	role := awsiam.NewRole(stack, jsii.String("Reporter"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
	})

	// An already deployed table: nothing is created, grants name the table
	// and its CallerIdIndex.
	tickets, err := itsm.ImportTicketsTable(stack, "Tickets", stage, table.ImportOptions{})
	if err != nil {
		return nil, err
	}
	tickets.GrantRead(role)

	// A table of our own with the documented schema and the stage policy,
	// renamed so it cannot collide with the service's table.
	own, err := agenticpm.NewTable(stack, "Scratch", table.Props{
		Stage:     stage,
		TableName: "reporting-scratch-" + string(stage),
	})
	if err != nil {
		return nil, err
	}
	own.GrantReadWrite(role)
	return stack, nil
}
