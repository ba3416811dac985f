// Command driftplan says what each drift check covers, from the stages'
// configuration (infra/config): with -stacks <stage>, the stacks of the
// stage in its own account, as cdk drift's arguments (make drift); with
// -placed, the services placed in another account than their stage's, as
// the JSON matrix of the drift workflow's detect-placed job ([] when
// there are none).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dynastack/dynastack/infra/config"
)

func main() {
	stacks := flag.String("stacks", "", "print the stacks of this stage in its own account")
	placed := flag.Bool("placed", false, "print the services placed in other accounts as a JSON matrix")
	flag.Parse()
	if err := run(*stacks, *placed, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "driftplan:", err)
		os.Exit(2)
	}
}

func run(stacks string, placed bool, w io.Writer) error {
	switch {
	case stacks != "" && !placed:
		s, err := config.Lookup(stacks)
		if err != nil {
			return err
		}
		var ids []string
		for _, svc := range s.HomeServices() {
			ids = append(ids, string(s.Name)+"/"+svc)
		}
		_, err = fmt.Fprintln(w, strings.Join(ids, " "))
		return err
	case placed && stacks == "":
		out, err := json.Marshal(config.PlacedDriftRuns(config.Stages()))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(out))
		return err
	}
	return fmt.Errorf("give -stacks <stage> or -placed")
}
