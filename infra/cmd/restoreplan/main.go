// Command restoreplan prints the commands of a point-in-time restore of one
// table (make restore-plan STAGE= SERVICE= TABLE= TIME=; docs/restoring.md).
// Exit 2 when the request is refused (the message names the valid values).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/dynastack/dynastack/infra/ddbguard"
	"github.com/dynastack/dynastack/infra/restoreplan"
)

func main() {
	var r restoreplan.Request
	templates := flag.String("templates", "test/snapshots", "golden-file directory or cloud assembly")
	flag.StringVar(&r.Stage, "stage", "", "stage")
	flag.StringVar(&r.Service, "service", "", "service")
	flag.StringVar(&r.Table, "table", "", "the table's construct id (Tickets, Inbox, App, Audit, Messages, Table)")
	flag.StringVar(&r.Time, "time", "", "restore point, RFC 3339")
	flag.Parse()
	r.Now = time.Now()
	set, err := ddbguard.Load(*templates)
	if err == nil {
		var out string
		out, err = restoreplan.Plan(set, r)
		fmt.Print(out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, restoreplan.ErrRefused) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
