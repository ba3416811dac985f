// Command stak-erase erases one user of a tenant from Stak's inbox table
// (docs/schemas/stak.md, "Runbook: erase a user"): the user's messages
// (each copy is addressed to the user alone), the read receipts of public
// messages, the user's counters and stream markers, in every inbox of the
// tenant. Public messages stay.
//
//	STAK_INBOX_TABLE=stak-inbox-prod go run ./ops/stak-erase -tenant acme -uid u-123
//
// It runs with the operator's AWS credentials (dynamodb:Query,
// DeleteItem, UpdateItem and ConditionCheckItem on the table; no deployed
// role may delete), prints the report as JSON, and exits 1 when the
// erasure is not complete (publishes to the user kept arriving): stop them
// and run it again. Running it twice is harmless; the second run of a
// complete erasure deletes nothing.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stak-erase:", err)
		os.Exit(1)
	}
}

// errUsage: the arguments or the environment are incomplete.
var errUsage = errors.New("usage: " + stakcontract.EnvTable + "=<table> stak-erase -tenant <tenant_key> -uid <user id>")

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("stak-erase", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tenant := fs.String(stakcontract.ParamTenant.String(), "", "the tenant key")
	uid := fs.String(stakcontract.ParamUID.String(), "", "the user id to erase")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || *tenant == "" || *uid == "" || getenv(stakcontract.EnvTable) == "" {
		return errUsage
	}
	client, err := ddb.NewClient(ctx, getenv)
	if err != nil {
		return err
	}
	res, err := stak.NewEraser(client, getenv(stakcontract.EnvTable)).EraseUser(ctx, *tenant, *uid)
	if res != nil {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	}
	if err != nil {
		return err
	}
	if !res.Done() {
		return fmt.Errorf("inboxes %v still hold items of %s: stop publishing to the user and run again", res.Unsettled, *uid)
	}
	return nil
}
