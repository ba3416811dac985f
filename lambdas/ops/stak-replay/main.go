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
// again or a batch was not read to its end. Replaying twice is harmless: the consumer skips what it applied.
package main

import (
	"context"
	"encoding/json"
	"errors"
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
	var results []Result
	enc := json.NewEncoder(os.Stdout)
	for _, f := range failures {
		res, err := Replay(ctx, streams, consumer.Handle, f.Batch)
		if err != nil {
			return err
		}
		_ = enc.Encode(res)
		results = append(results, res)
	}
	return check(results)
}

// check fails when a record failed again, or when a batch was not read to
// its end (its messages must stay on the queue: the records after the
// last one read were not replayed).
func check(results []Result) error {
	bad, short := 0, 0
	for _, r := range results {
		bad += len(r.Failed)
		if !r.Complete {
			short++
		}
	}
	var errs []error
	if bad > 0 {
		errs = append(errs, fmt.Errorf("%d records failed again; see the consumer's log, fix, and run again", bad))
	}
	if short > 0 {
		errs = append(errs, fmt.Errorf("%d batches not read to their end (\"complete\": false): keep their messages and run again", short))
	}
	return errors.Join(errs...)
}
