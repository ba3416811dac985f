package ddb_test

import (
	"fmt"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

func ExampleWithEndpoint() {
	env := map[string]string{"ITSM_TICKETS_TABLE": "poc-itsm-tickets-dev", ddb.EnvEndpoint: "https://dynamodb.eu-west-1.amazonaws.com"}
	getenv := ddb.WithEndpoint("http://127.0.0.1:8000", func(k string) string { return env[k] })
	fmt.Println(getenv(ddb.EnvEndpoint), getenv("ITSM_TICKETS_TABLE"))
	fmt.Printf("%q\n", ddb.WithEndpoint("http://127.0.0.1:8000", nil)("AWS_REGION"))
	// Output:
	// http://127.0.0.1:8000 poc-itsm-tickets-dev
	// ""
}
