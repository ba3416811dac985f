// Command stak-replay replays the DynamoDB stream records of the batches
// that Stak's stream consumer gave up on, from the on-failure messages in
// its StreamFailures queue (docs/schemas/stak.md, "Runbook: replay"):
//
//	aws sqs receive-message --queue-url "$FAILURES" --max-number-of-messages 10 \
//	  | jq -c '.Messages[].Body | fromjson' \
//	  | STAK_INBOX_TABLE=stak-inbox-prod go run ./ops/stak-replay
//
// It reads the records again from the stream (they stay 24 hours) and runs
// the consumer's own code on them with the caller's AWS credentials; it
// prints one JSON result per message and exits 1 if any record failed
// again. Replaying twice is harmless: the consumer skips what it applied.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/dynastack/dynastack/lambdas/ops/streamsapi"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

func main() {
	ctx := context.Background()
	if err := run(ctx, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "stak-replay:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	failures, err := Decode(os.Stdin)
	if err != nil {
		return err
	}
	consumer, err := stak.NewConsumer(ctx, getenv)
	if err != nil {
		return err
	}
	client, err := ddb.NewClient(ctx, getenv)
	if err != nil {
		return err
	}
	streams := streamsapi.NewClient(client)
	bad := 0
	enc := json.NewEncoder(os.Stdout)
	for _, f := range failures {
		res, err := Replay(ctx, streams, consumer.Handle, f.Batch)
		if err != nil {
			return err
		}
		_ = enc.Encode(res)
		bad += len(res.Failed)
	}
	if bad > 0 {
		return fmt.Errorf("%d records failed again; see the consumer's log, fix, and run again", bad)
	}
	return nil
}
