package ddbguard_test

import (
	"fmt"

	"github.com/dynastack/dynastack/infra/ddbguard"
)

// A table shaped like the golden ones, with the index list left open.
const ticketsTemplate = `{"Resources": {"Tickets83B11BB2": {
  "Type": "AWS::DynamoDB::GlobalTable",
  "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
  "Metadata": {"aws:cdk:path": "prod/itsm/Tickets/Resource"},
  "Properties": {
    "TableName": "poc-itsm-tickets-prod",
    "AttributeDefinitions": [{"AttributeName": "ticket_id", "AttributeType": "S"}, {"AttributeName": "status", "AttributeType": "S"}, {"AttributeName": "caller_id", "AttributeType": "S"}],
    "KeySchema": [{"AttributeName": "ticket_id", "KeyType": "HASH"}],
    "BillingMode": "PAY_PER_REQUEST",
    "GlobalSecondaryIndexes": [%s],
    "Replicas": [{"Region": {"Ref": "AWS::Region"}, "DeletionProtectionEnabled": true,
      "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}]
  }}}}`

func index(name, hash string) string {
	return fmt.Sprintf(`{"IndexName": %q, "KeySchema": [{"AttributeName": %q, "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}`, name, hash)
}

func mustSet(name, template string) ddbguard.Set {
	t, err := ddbguard.ParseTemplate(name, []byte(template))
	if err != nil {
		panic(err)
	}
	return ddbguard.Set{Path: name, Layout: ddbguard.LayoutFile, Templates: []*ddbguard.Template{t}}
}

// Two indexes added in one change: CloudFormation takes one per update.
func ExampleCompare() {
	old := mustSet("old.json", fmt.Sprintf(ticketsTemplate, ""))
	new := mustSet("new.json", fmt.Sprintf(ticketsTemplate, index("ByStatus", "status")+","+index("ByCaller", "caller_id")))

	report := ddbguard.Compare(old, new)
	for _, h := range report.Hazards {
		fmt.Println(h.Class)
		fmt.Println(h.Fix)
	}
	// Output:
	// multiple-gsi-changes
	// split into two deploys: add index ByCaller, then index ByStatus
}

// One index is a safe change.
func ExampleReport_Summary() {
	old := mustSet("old.json", fmt.Sprintf(ticketsTemplate, ""))
	new := mustSet("new.json", fmt.Sprintf(ticketsTemplate, index("ByStatus", "status")))
	fmt.Println(ddbguard.Compare(old, new).Summary())
	// Output:
	// 1 stack, 1 table compared, 1 safe change (prod/itsm Tickets83B11BB2: index ByStatus added)
}

// An acknowledgement from the command line lets a deliberate hazard pass.
func ExampleReport_Acknowledge() {
	old := mustSet("old.json", fmt.Sprintf(ticketsTemplate, ""))
	new := mustSet("new.json", fmt.Sprintf(ticketsTemplate, index("ByStatus", "status")+","+index("ByCaller", "caller_id")))
	ack, err := ddbguard.ParseAck("prod/itsm/Tickets83B11BB2/multiple-gsi-changes=table is still empty in prod")
	if err != nil {
		panic(err)
	}
	outcome := ddbguard.Compare(old, new).Acknowledge([]ddbguard.Ack{ack})
	fmt.Println(outcome.Failed())
	for _, a := range outcome.Acked {
		fmt.Println(a.Class, "-", a.Ack.Reason)
	}
	// Output:
	// false
	// multiple-gsi-changes - table is still empty in prod
}
