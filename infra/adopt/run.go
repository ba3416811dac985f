// Package adopt compares a live DynamoDB table, as the AWS CLI describes it,
// with the table a dynastack stack would import in its place, field by
// field and offline, and writes the `cdk import --resource-mapping` file
// when the template can import the table as it is
// (docs/adopting-tables.md).
package adopt

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/infra/ddbguard"
)

// Exit codes of Run.
const (
	ExitImportable = 0
	ExitDifferent  = 1
	ExitBadInput   = 2
)

// Run is the adopt command: flags, then the CLI output files. It prints
// the mapping file's path on stdout (exit 0), one line per difference on
// stdout (exit 1), or what is wrong with the input on stderr (exit 2).
func Run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("adopt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stage := fs.String("stage", "", "stage whose stack imports the table (dev, stage, prod)")
	svc := fs.String("service", "", "service whose stack imports the table")
	templates := fs.String("templates", "test/snapshots", "golden files (<dir>/<stage>/<service>.template.json) or a cdk.out cloud assembly")
	out := fs.String("out", "cdk.out/adopt", "folder for the resource-mapping file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: adopt -stage <stage> -service <service> [-templates dir] [-out dir] <describe-table.json> [describe-time-to-live.json] [describe-continuous-backups.json] [list-tags-of-resource.json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return ExitBadInput
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "adopt: "+format+"\n", a...)
		return ExitBadInput
	}
	if *stage == "" || *svc == "" || fs.NArg() == 0 {
		fs.Usage()
		return ExitBadInput
	}
	files := map[string][]byte{}
	for _, name := range fs.Args() {
		b, err := os.ReadFile(name)
		if err != nil {
			return fail("cannot read %s: %v", name, errors.Unwrap(err))
		}
		files[name] = b
	}
	live, err := ParseLive(files)
	if err != nil {
		return fail("%v", err)
	}
	set, err := ddbguard.Load(*templates)
	if err != nil {
		return fail("%v", err)
	}
	var stages []string
	for _, t := range set.Templates {
		if !slices.Contains(stages, t.Stage) {
			stages = append(stages, t.Stage)
		}
	}
	if !slices.Contains(stages, *stage) {
		return fail("unknown stage %q: %s has %s", *stage, *templates, strings.Join(slices.Sorted(slices.Values(stages)), ", "))
	}
	var services []string
	for _, c := range catalog.Services() {
		services = append(services, c.Name)
	}
	if !slices.Contains(services, *svc) {
		return fail("unknown service %q: use one of %s", *svc, strings.Join(services, ", "))
	}
	targets, err := Targets(set, *stage, *svc)
	if err != nil {
		return fail("%v", err)
	}
	var target *Target
	var names []string
	for i, t := range targets {
		names = append(names, fmt.Sprintf("%s (construct %s, logical id %s)", t.Name, t.ConstructID, t.LogicalID))
		if t.Name == live.Table.TableName {
			target = &targets[i]
		}
	}
	if len(targets) == 0 {
		return fail("stack %s/%s has no table in %s", *stage, *svc, *templates)
	}
	if target == nil {
		hint := targets[0]
		return fail("table %q is not a table of %s/%s, whose tables are %s; to adopt it as one of them, set TableNames[config.TableKey(%q, %q)] = %q for stage %s in infra/config, then make snapshots and run this again",
			live.Table.TableName, *stage, *svc, strings.Join(names, ", "), *svc, hint.ConstructID, live.Table.TableName, *stage)
	}
	res := Compare(*target, live)
	for _, n := range res.NotChecked {
		fmt.Fprintln(stderr, "not checked: "+n)
	}
	if len(res.Differences) > 0 {
		for _, d := range res.Differences {
			fmt.Fprintln(stdout, d.Line())
		}
		fmt.Fprintf(stderr, "adopt: %s/%s %s cannot import table %s as it is: %s in %d fields compared; make each change above (live updates in their numbered order, one index change per update), describe the table again and run this again\n",
			*stage, *svc, target.LogicalID, live.Table.TableName, plural(len(res.Differences), "difference"), res.Checked)
		return ExitDifferent
	}
	path, err := WriteMapping(*out, *target)
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(stderr, "adopt: %s/%s %s can import table %s as it is (%d fields compared); next: npx cdk import --resource-mapping %s '%s/%s' (docs/adopting-tables.md)\n",
		*stage, *svc, target.LogicalID, live.Table.TableName, res.Checked, path, *stage, *svc)
	fmt.Fprintln(stdout, path)
	return ExitImportable
}

// WriteMapping writes the resource-mapping file `cdk import
// --resource-mapping` reads: the table's logical id to its identifier
// (a GlobalTable's is TableName).
func WriteMapping(dir string, t Target) (string, error) {
	b, err := json.MarshalIndent(map[string]map[string]string{t.LogicalID: {"TableName": t.Name}}, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot write the mapping file: %v", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.resource-mapping.json", t.Stage, t.Stack, t.Name))
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("cannot write the mapping file: %v", err)
	}
	return path, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
