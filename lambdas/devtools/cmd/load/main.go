// Command load runs devtools/load against a running make dev: per service
// a fixed mix of creates, reads, updates and list pages, then the integrity
// checks. It prints one Markdown table and exits 1 when an operation
// failed (other than a 503 with Retry-After) or an integrity check did not
// hold.
//
//	make load                      # every service, 400 operations each, 8 clients
//	make load N=2000 C=16 SERVICES=itsm,stak
//
// The Stak token make mints reaches it in STAK_TOKEN (or a file, or
// standard input: devtools/bearer), never on its command line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/dynastack/dynastack/lambdas/devtools/bearer"
	"github.com/dynastack/dynastack/lambdas/devtools/load"
)

func main() {
	if err := bearer.Stak.CheckArgs(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
	base := flag.String("base", "http://127.0.0.1:8080", "make dev's URL")
	n := flag.Int("n", 400, "operations per service")
	c := flag.Int("c", 8, "concurrent clients per service")
	only := flag.String("services", "", "comma-separated services (default: all)")
	// An end-user token of tenant load.StakTenant, user load.StakUser
	// (make token); without it Stak is left out.
	tokenFlags := bearer.Stak.Flags(flag.CommandLine)
	flag.Parse()
	token, err := tokenFlags.Read(os.Getenv, os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var reports []load.Report
	failed := false
	for _, sc := range load.Scenarios(token) {
		if *only != "" && !slices.Contains(strings.Split(*only, ","), sc.Service) {
			continue
		}
		rep, err := load.Run(ctx, *base, sc, load.Options{Count: *n, Concurrency: *c})
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(2)
		}
		reports = append(reports, rep)
		if rep.Errors() > 0 || len(rep.Problems) > 0 {
			failed = true
		}
	}
	fmt.Print(load.Table(reports))
	for _, r := range reports {
		if r.FirstError != "" {
			fmt.Printf("%s: first error: %s\n", r.Service, r.FirstError)
		}
		for _, p := range r.Problems {
			fmt.Printf("%s: integrity: %s\n", r.Service, p)
		}
	}
	if failed {
		os.Exit(1)
	}
}
