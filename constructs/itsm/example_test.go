package itsm_test

import (
	"fmt"
	"log"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/itsm"
	"github.com/dynastack/dynastack/constructs/table"
)

// A team adds the tickets table to its own stack and lets a function read and
// write it. The grant names the table and CallerIdIndex, nothing else.
func ExampleNewTicketsTable() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Helpdesk"), nil)

	tickets, err := itsm.NewTicketsTable(stack, "Tickets", table.Props{Stage: table.Dev})
	if err != nil {
		log.Fatal(err)
	}
	role := awsiam.NewRole(stack, jsii.String("Api"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
	})
	tickets.GrantReadWrite(role)

	fmt.Println(tickets.Spec.PhysicalName(table.Dev), tickets.Spec.IndexNames(), len(tickets.IndexArns()))
	// Output: poc-itsm-tickets-dev [CallerIdIndex] 1
}

// Referencing the deployed table of a stage creates nothing.
func ExampleImportTicketsTable() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Reporting"), nil)
	if _, err := itsm.ImportTicketsTable(stack, "Tickets", table.Prod, table.ImportOptions{}); err != nil {
		log.Fatal(err)
	}
	_, err := itsm.ImportTicketsTable(stack, "Typo", "production", table.ImportOptions{})
	fmt.Println(err != nil)
	// Output: true
}
