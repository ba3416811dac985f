package cfntables_test

import (
	"fmt"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
)

// A function's environment, with the table Ref resolved to the name the
// table was created under (here with a per-test suffix).
func ExampleFunction_Environment() {
	tmpl, err := cfntables.Parse([]byte(`{"Resources": {
		"Tickets1A2B": {"Type": "AWS::DynamoDB::GlobalTable", "Properties": {
			"TableName": "poc-itsm-tickets-dev",
			"KeySchema": [{"AttributeName": "ticket_id", "KeyType": "HASH"}],
			"AttributeDefinitions": [{"AttributeName": "ticket_id", "AttributeType": "S"}]}},
		"Api3C4D": {"Type": "AWS::Lambda::Function", "Properties": {"Environment": {"Variables": {
			"DYNASTACK_SERVICE": "itsm", "ITSM_TICKETS_TABLE": {"Ref": "Tickets1A2B"}}}}}}}`))
	if err != nil {
		panic(err)
	}
	tables, _ := tmpl.Tables()
	opts := cfntables.Options{Suffix: "-t1234"}
	names := map[string]string{tables[0].LogicalID: opts.TableName(tables[0])}

	fns, _ := tmpl.Functions()
	env, err := fns[0].Environment(names)
	fmt.Println(fns[0].Service(), env["ITSM_TICKETS_TABLE"], err)
	// Output: itsm poc-itsm-tickets-dev-t1234 <nil>
}
