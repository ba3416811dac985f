package nucleus_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/nucleus"
)

// The store on its own: register an account, create a schedule, target an
// instance, read the schedule with its resources and its audit log. The
// store trusts its input; the HTTP handler validates it first.
func ExampleStore() {
	ctx := context.Background()
	client, tables, cleanup := exampleTables(ctx)
	defer cleanup()
	store := nucleus.NewStore(client, tables, []byte("cursor signing key"))

	const user = "alice@example.com"
	acct, err := store.CreateAccount(ctx, user, nucleus.NewAccount{AccountID: "123456789012", AccountName: "Dev",
		RoleARN: "arn:aws:iam::123456789012:role/NucleusRole", Status: nucleus.AccountActive})
	if err != nil {
		panic(err)
	}
	sc, err := store.CreateSchedule(ctx, user, nucleus.NewSchedule{ScheduleName: "Office hours",
		StartCron: "0 8 * * MON-FRI", EndCron: "0 18 * * MON-FRI", Timezone: "Europe/Berlin", Enabled: true})
	if err != nil {
		panic(err)
	}
	_, created, err := store.AttachResource(ctx, user, sc.ScheduleID, nucleus.NewResource{ResourceType: nucleus.ResourceEC2,
		ResourceARN: "arn:aws:ec2:eu-central-1:123456789012:instance/i-0123456789abcdef0", Region: "eu-central-1", AccountID: acct.AccountID})
	if err != nil {
		panic(err)
	}
	d, err := store.Schedule(ctx, sc.ScheduleID, "", 0)
	if err != nil {
		panic(err)
	}
	log, err := store.AuditLog(ctx, nucleus.AuditQuery{Entity: &nucleus.Entity{Type: nucleus.EntitySchedule, ID: sc.ScheduleID}})
	if err != nil {
		panic(err)
	}
	fmt.Println(created, d.Schedule.ScheduleName, len(d.Resources), d.Resources[0].ResourceARN)
	for _, e := range log.Entries {
		fmt.Println(e.Action, e.UserID, e.Status)
	}
	_, err = store.Account(ctx, "999999999999")
	fmt.Println(err)
	// Output:
	// true Office hours 1 arn:aws:ec2:eu-central-1:123456789012:instance/i-0123456789abcdef0
	// CREATE alice@example.com SUCCESS
	// CREATE alice@example.com SUCCESS
	// nucleus: account not found
}

// exampleTables creates the Nucleus tables for an Example, which has no
// testing.TB for testenv: it reuses the tests' DynamoDB Local (or
// AWS_ENDPOINT_URL_DYNAMODB) and starts its own when run alone.
func exampleTables(ctx context.Context) (*dynamodb.Client, nucleus.Tables, func()) {
	ep := endpoint
	if ep == "" {
		ep = os.Getenv(ddblocal.EnvEndpoint)
	}
	var stop func()
	if ep == "" {
		srv, err := ddblocal.Start(ctx, ddblocal.Options{})
		if err != nil {
			panic(err)
		}
		ep, stop = srv.Endpoint, func() { _ = srv.Close() }
	}
	client, err := ddb.NewClient(ctx, ddblocal.WithEndpoint(ep, nil))
	if err != nil {
		panic(err)
	}
	root, err := repo.Root("")
	if err != nil {
		panic(err)
	}
	tmpl, err := cfntables.Load(filepath.Join(root, "test", "snapshots", "dev", "nucleus"+cfntables.TemplateSuffix))
	if err != nil {
		panic(err)
	}
	names, err := cfntables.Create(ctx, client, tmpl, cfntables.Options{Suffix: testenv.Suffix()})
	if err != nil {
		panic(err)
	}
	cleanup := func() {
		_ = cfntables.Delete(ctx, client, names)
		if stop != nil {
			stop()
		}
	}
	return client, nucleus.Tables{App: names["AppF1B96344"], Audit: names["Audit3D8ADE0A"]}, cleanup
}
