package agenticpm_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// The store on its own, as a batch job or another Lambda would use it. Not
// run by go test (it needs a deployed table); the handler tests cover the
// same calls against DynamoDB Local.
func ExampleStore() {
	ctx := context.Background()
	client, err := ddb.NewClient(ctx, os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	store := agenticpm.NewStore(client, "AgenticPM-dev", []byte("cursor-key"))

	p, err := store.CreateProject(ctx, agenticpm.NewProject{Name: "MCU rebuild", Source: agenticpm.SourceJira,
		SourceProjectKey: "MCU", AutonomyLevel: agenticpm.AutonomyArtefact})
	if err != nil {
		log.Fatal(err)
	}
	// Version 0 creates; later writes pass the version they read.
	a, err := store.PutArtefact(ctx, p.ID, agenticpm.ArtefactDeliveryState, agenticpm.Doc(`{"overall_status":"green"}`), 0)
	if err != nil {
		log.Fatal(err)
	}
	_, err = store.PutArtefact(ctx, p.ID, agenticpm.ArtefactDeliveryState, agenticpm.Doc(`{"overall_status":"amber"}`), a.Version)
	if errors.Is(err, agenticpm.ErrVersionConflict) {
		fmt.Println("someone else updated it first; read and retry")
	}
	if _, err := store.RecordEvent(ctx, agenticpm.NewEvent{ProjectID: p.ID, EventType: "artefact_updated",
		Severity: agenticpm.SeverityInfo, Summary: "delivery state is amber"}); err != nil {
		log.Fatal(err)
	}
	for page, after := 0, ""; page < 3; page++ {
		events, err := store.ListProjectEvents(ctx, p.ID, after, 25)
		if err != nil {
			log.Fatal(err)
		}
		for _, e := range events.Items {
			fmt.Println(e.CreatedAt, e.Summary)
		}
		if after = events.Next; after == "" {
			break
		}
	}
}
