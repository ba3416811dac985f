package rezagent_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/rezagent"
)

// A message's life as a processor drives it, with the errors a caller
// tells apart with errors.Is.
func ExampleStore() {
	client, table, done := exampleTable()
	defer done()
	store := rezagent.NewStore(client, table, "dev", []byte("cursor-key"))
	ctx := context.Background()

	m, err := store.Create(ctx, rezagent.NewMessage{MessageType: "scheduled_hello", CreatedBy: "scheduler",
		Payload: rezagent.Payload{"text": "hello world", "tags": []string{"scheduled", "daily"}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Stage, m.Status)

	for _, ch := range []rezagent.StatusChange{
		{To: rezagent.StatusQueued},
		{To: rezagent.StatusProcessing},
		{To: rezagent.StatusProcessing}, // redelivered after a crash
		{To: rezagent.StatusFailed, ErrorMessage: "ntfy.sh returned 503"},
	} {
		if m, err = store.SetStatus(ctx, m.MessageID, ch); err != nil {
			panic(err)
		}
		fmt.Println(m.Status, m.RetryCount)
	}

	_, err = store.SetStatus(ctx, m.MessageID, rezagent.StatusChange{To: rezagent.StatusProcessing})
	fmt.Println(errors.Is(err, rezagent.ErrInvalidTransition), err)
	_, err = store.SetStatus(ctx, "3f1d7e3a-0000-4000-8000-000000000000", rezagent.StatusChange{To: rezagent.StatusQueued})
	fmt.Println(errors.Is(err, rezagent.ErrNotFound))

	page, _ := store.List(ctx, rezagent.Query{Status: rezagent.StatusFailed, From: time.Now().Add(-time.Hour)})
	fmt.Println(len(page.Messages), page.Messages[0].ErrorMessage, page.Next == "")

	metrics, _ := store.Metrics(ctx, time.Now().Add(-24*time.Hour))
	fmt.Println(metrics.Counts[rezagent.StatusFailed], metrics.Total, *metrics.SuccessRate)
	// Output:
	// dev created
	// queued 0
	// processing 0
	// processing 1
	// failed 1
	// true rezagent: cannot change status from failed to processing: failed is final
	// true
	// 1 ntfy.sh returned 503 true
	// 1 1 0
}

// exampleTable creates the messages table from the dev golden template in
// DynamoDB Local. Examples get no testing.TB for testenv: this reuses the
// endpoint the tests ran against (tests run before examples), else
// AWS_ENDPOINT_URL_DYNAMODB, else starts a server of its own.
func exampleTable() (client *dynamodb.Client, table string, done func()) {
	root, err := repo.Root("")
	if err != nil {
		panic(err)
	}
	getenv := func(string) string { return "" }
	stop := func() {}
	if ep := cmp.Or(testEndpoint, os.Getenv(ddblocal.EnvEndpoint)); ep != "" {
		getenv = ddblocal.WithEndpoint(ep, nil)
	} else {
		srv, err := ddblocal.Start(context.Background(), ddblocal.Options{Root: root})
		if err != nil {
			panic(err)
		}
		getenv, stop = srv.Getenv(getenv), func() { _ = srv.Close() }
	}
	c, err := ddb.NewClient(context.Background(), getenv)
	if err != nil {
		panic(err)
	}
	tmpl, err := cfntables.Load(filepath.Join(root, "test", "snapshots", "dev", "rezagent"+cfntables.TemplateSuffix))
	if err != nil {
		panic(err)
	}
	names, err := cfntables.Create(context.Background(), c, tmpl, cfntables.Options{Suffix: testenv.Suffix()})
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		table = n
	}
	return c, table, func() {
		_ = cfntables.Delete(context.Background(), c, names)
		stop()
	}
}
